import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import linkedin, { linkedInOptions, type LinkedInOptions } from '../../adapters/ads/linkedin/index.ts'
import { LinkedInOAuthError, tokenCacheKey } from '../../adapters/ads/linkedin/auth.ts'
import { skipReason, toEventId, type BatchCreateBody, type ConversionEventElement } from '../../adapters/ads/linkedin/map.ts'
import { LINKEDIN_API_VERSION } from '../../adapters/ads/linkedin/version.ts'
import type { ConversionEvent, DeliveryOutcome } from '../../core/delivery/types.ts'
import type { AuthContext } from '../../core/registry.ts'
import { planDelivery, testAdPlatform, toResponse, type ContractReply } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, sha256 } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { linkedInErrors, startFakeLinkedIn, type FakeLinkedIn } from '../fakes/linkedin.ts'

const RULES = { Purchase: '101', Lead: '102', CompleteRegistration: '103', Schedule: '104' }
const CONTRACT_OPTIONS = v.parse(linkedInOptions, { accessToken: 'AQVfake-static-access-token', conversionRules: RULES, baseUrl: 'http://127.0.0.1:9/linkedin' })
const options = (overrides: Record<string, unknown> = {}): LinkedInOptions => v.parse(linkedInOptions, { accessToken: 'AQVfake-static-access-token', conversionRules: RULES, ...overrides })

function event(overrides: Partial<ConversionEvent> = {}): ConversionEvent {
  return {
    messageId: 'msg-1', siteId: 'demo', event: 'demo_booked', standardEvent: 'Schedule',
    occurredAt: new Date(Date.now() - 3_600_000), value: 49.9, currency: 'EUR', items: [], channel: 'online',
    identity: { email: sha256('john_smith@gmail.com'), emailGoogle: sha256('johnsmith@gmail.com'), phoneE164: sha256('+16505551212') },
    clickIds: { li_fat_id: '3f2a9c1e-7b4d-4e8a-9f10-2c6d8b5a4e71' },
    consent: { adUserData: 'granted', adPersonalization: 'granted' }, confirmation: 'crm_qualified',
    ...overrides,
  }
}

const elementsOf = (body: unknown) => (body as BatchCreateBody).elements
const mapped = (events: ConversionEvent[], opts = options()) => elementsOf(JSON.parse(linkedin.toRequest(events, opts).body))
const reply = (r: ContractReply) => toResponse(r)
const memoryCache = () => {
  const store = new Map<string, { value: string, ttl: number }>()
  return { store, get: async (key: string) => store.get(key)?.value ?? null, set: async (key: string, value: string, ttl: number) => void store.set(key, { value, ttl }) }
}
const context = (cache = memoryCache()): AuthContext => ({ fetch, cache, signal: AbortSignal.timeout(5000) })

/** What the delivery pipeline does with one batch: authorize, map, send, classify. */
async function deliver(events: ConversionEvent[], opts: LinkedInOptions, ctx = context()): Promise<DeliveryOutcome[]> {
  const response = await send(linkedin.toRequest(events, opts), await linkedin.authorize!(opts, ctx))
  return linkedin.parseResponse(response, events)
}

testAdPlatform<LinkedInOptions>({
  adapter: linkedin,
  folder: 'linkedin',
  options: CONTRACT_OPTIONS,
  invalidOptions: [
    { conversionRules: RULES },
    { accessToken: 'AQV1', refreshToken: 'AQW1', clientId: 'c', clientSecret: 's', conversionRules: RULES },
    { refreshToken: 'AQW1', clientId: 'c', conversionRules: RULES },
    { accessToken: 'AQV1', conversionRules: {} },
    { accessToken: 'AQV1', conversionRules: { purchase: '101' } },
    { accessToken: 'AQV1', conversionRules: { Purchase: 'AW-1234/label' } },
    { accessToken: 'AQV1', conversionRules: RULES, baseUrl: 'api.linkedin.com' },
    { accessToken: 'AQV1', conversionRules: RULES, testConversionrule: '199' },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { elements: events.map(() => ({ status: 201 })) } }),
    partial: () => ({ reply: linkedInErrors.invalidRows(new Map([[1, ['/conversionHappenedAt :: conversion happened more than 90 days ago']]])), statuses: ['retry', 'rejected', 'retry'] }),
    auth: { ...linkedInErrors.expiredToken(), platformMessage: 'The token used in the request has expired' },
    rateLimit: { ...linkedInErrors.throttled(), platformMessage: 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.' },
    serverError: { ...linkedInErrors.serverError(), platformMessage: 'Internal Server Error' },
  },
  countEvents: (body) => elementsOf(body).length,
  // LinkedIn discards a Conversions API event whose eventId matches an Insight Tag event of the same account.
  dedupKeyIn: (body, e) => elementsOf(body).some((element) => element.eventId === toEventId(e.messageId)),
  // userInfo: LinkedIn documents names, company and title in plain text (README "userInfo").
  piiFields: { sentPlain: ['firstName', 'lastName', 'company', 'title'] },
  additionalTests: linkedInSpecificTests,
})

function linkedInSpecificTests(): void {
  describe('linkedin options', () => {
    it('takes rule ids as digits, numbers or URNs, and fills in LinkedIn\'s hosts', () => {
      expect(options({ conversionRules: { Purchase: 'urn:lla:llaPartnerConversion:101', Lead: 102 } })).toMatchObject({
        conversionRules: { Purchase: '101', Lead: '102' }, baseUrl: 'https://api.linkedin.com', oauthUrl: 'https://www.linkedin.com/oauth/v2/accessToken',
      })
    })

    it('says which credentials are missing or clash', () => {
      const message = (input: Record<string, unknown>) => v.safeParse(linkedInOptions, { conversionRules: RULES, ...input }).issues?.[0]?.message
      expect(message({})).toBe('needs accessToken, or refreshToken with clientId and clientSecret')
      expect(message({ accessToken: 'a', refreshToken: 'r' })).toBe('give accessToken or refreshToken (with clientId and clientSecret), not both')
      expect(message({ refreshToken: 'r', clientId: 'c' })).toBe('refreshToken needs clientId and clientSecret too')
      expect(v.safeParse(linkedInOptions, { refreshToken: 'r', clientId: 'c', clientSecret: 's', conversionRules: { Lead: '1' } }).success).toBe(true)
    })
  })

  describe('linkedin mapping', () => {
    it('posts one BATCH_CREATE to /rest/conversionEvents with the pinned version and Rest.li 2.0 headers, no token in it', () => {
      const request = linkedin.toRequest([event()], options())
      expect(request).toMatchObject({ method: 'POST', url: 'https://api.linkedin.com/rest/conversionEvents' })
      expect(request.headers).toEqual({ 'Content-Type': 'application/json', 'LinkedIn-Version': LINKEDIN_API_VERSION, 'X-Restli-Protocol-Version': '2.0.0', 'X-RestLi-Method': 'BATCH_CREATE' })
    })

    it('sends each standard event to its rule\'s URN; a site\'s own mapping overrides, and test mode sends all to the test rule', () => {
      const four = (['Purchase', 'Lead', 'CompleteRegistration', 'Schedule'] as const).map((standardEvent, i) => event({ standardEvent, messageId: `m${i}` }))
      expect(mapped(four).map((e) => e.conversion)).toEqual(['101', '102', '103', '104'].map((id) => `urn:lla:llaPartnerConversion:${id}`))
      expect(mapped(four.slice(0, 1), options({ conversionRules: { Purchase: '555' } }))[0]!.conversion).toBe('urn:lla:llaPartnerConversion:555')
      expect(mapped(four, options({ testConversionRule: '199' })).map((e) => e.conversion)).toEqual(four.map(() => 'urn:lla:llaPartnerConversion:199'))
    })

    it('writes conversionHappenedAt in epoch milliseconds, the value as a decimal string, and eventId = messageId', () => {
      const occurredAt = new Date('2026-11-20T09:08:07.654Z')
      expect(mapped([event({ occurredAt, value: 129.85, currency: 'USD' })])[0]).toMatchObject({ conversionHappenedAt: 1795165687654, conversionValue: { currencyCode: 'USD', amount: '129.85' }, eventId: 'msg-1' })
      expect(mapped([event({ value: 0.1 + 0.2 })])[0]!.conversionValue).toEqual({ currencyCode: 'EUR', amount: '0.3' })
      expect(mapped([event({ value: 50, currency: undefined })])[0]).not.toHaveProperty('conversionValue')
      expect(mapped([event({ value: -5 })])[0]).not.toHaveProperty('conversionValue')
      const long = 'order-'.padEnd(80, 'x')
      expect(mapped([event({ messageId: long })])[0]!.eventId).toBe(sha256(long))
    })

    it('matches on SHA256_EMAIL (trim + lowercase variant) and the raw li_fat_id; no plain userInfo, externalIds as the digest', () => {
      // Meta's published vector for john_smith@gmail.com; LinkedIn uses the same trim + lowercase email.
      expect(sha256('john_smith@gmail.com')).toBe('62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f')
      const [element] = mapped([event({ identity: { ...HASHED_PERSON } })])
      expect(element!.user).toEqual({
        userIds: [{ idType: 'SHA256_EMAIL', idValue: HASHED_PERSON.email }, { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: '3f2a9c1e-7b4d-4e8a-9f10-2c6d8b5a4e71' }],
        externalIds: [HASHED_PERSON.externalId],
      } satisfies ConversionEventElement['user'])
      expect(HASHED_PERSON.email).not.toBe(HASHED_PERSON.emailGoogle)
      expect(mapped([event({ identity: { email: 'john_smith@gmail.com' } })])[0]!.user.userIds).toEqual([{ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: '3f2a9c1e-7b4d-4e8a-9f10-2c6d8b5a4e71' }])
    })

    it('skips what LinkedIn cannot take: no rule, denied ad user data, nothing to match on', () => {
      const opts = options({ conversionRules: { Purchase: '101' } })
      expect(skipReason(event({ standardEvent: 'Purchase' }), opts)).toBeUndefined()
      expect(skipReason(event(), opts)).toBe('no LinkedIn conversion rule is configured for Schedule')
      expect(skipReason(event(), options({ conversionRules: { Purchase: '101' }, testConversionRule: '199' }))).toBe('no LinkedIn conversion rule is configured for Schedule')
      expect(skipReason(event({ consent: { adUserData: 'denied', adPersonalization: 'granted' } }), options())).toMatch(/denied ad user data.*no consent signal/)
      expect(skipReason(event({ clickIds: { gclid: 'G' }, identity: { phoneE164: sha256('+16505551212') } }), options())).toBe('no hashed email or li_fat_id (LinkedIn first-party ad tracking id) for LinkedIn to match')
      expect(skipReason(event({ identity: {} }), options())).toBeUndefined() // li_fat_id alone
      expect(skipReason(event({ clickIds: {} }), options())).toBeUndefined() // hashed email alone
      expect(planDelivery(linkedin, [event({ messageId: 'p', standardEvent: 'Purchase' }), event({ messageId: 's' })], opts)).toMatchObject({ refused: { s: 'no LinkedIn conversion rule is configured for Schedule' }, sent: [{ messageId: 'p' }] })
    })

    it('skips an unmatchable event, saying why; the rest go in one request, one outcome each, in order', () => {
      const events = [event({ messageId: 'a' }), event({ messageId: 'b', identity: {}, clickIds: {} }), event({ messageId: 'c' })]
      const plan = planDelivery(linkedin, events, options())
      expect(plan.refused).toEqual({ b: expect.stringMatching(/^no hashed email/) })
      expect(elementsOf(JSON.parse(plan.request!.body)).map((e) => e.eventId)).toEqual(['a', 'c'])
      const outcomes = linkedin.parseResponse(reply({ status: 200, body: { elements: [{ status: 201 }, { status: 201 }] } }), plan.sent)
      expect(outcomes).toEqual([{ status: 'sent' }, { status: 'sent' }])
    })
  })

  describe('linkedin responses', () => {
    const three = [event({ messageId: 'a' }), event({ messageId: 'b' }), event({ messageId: 'c' })]

    it('places every row a 422 names, several errors per row, and sends the others again', () => {
      const rows = new Map([[0, ['/conversionValue/amount :: field is required but not found and has no default value', '/user/userInfo/firstName :: field is required but not found and has no default value']], [2, ['/eventId :: length must be between 1 and 64']]])
      expect(linkedin.parseResponse(reply(linkedInErrors.invalidRows(rows)), three)).toEqual([
        { status: 'rejected', message: 'LinkedIn refused this conversion (HTTP 422): ERROR :: /conversionValue/amount :: field is required but not found and has no default value; ERROR :: /user/userInfo/firstName :: field is required but not found and has no default value' },
        { status: 'retry', message: expect.stringContaining('because of other conversions in it') },
        { status: 'rejected', message: 'LinkedIn refused this conversion (HTTP 422): ERROR :: /eventId :: length must be between 1 and 64' },
      ])
    })

    it('rejects the rows of a rule that is not a Conversions API rule, saying how to fix it', () => {
      const [first, second] = linkedin.parseResponse(reply(linkedInErrors.wrongRules([1], 'Conversion\'s method should be CONVERSIONS_API')), three)
      expect(first).toMatchObject({ status: 'retry' })
      expect(second).toMatchObject({ status: 'rejected', message: expect.stringMatching(/indices \[1\].*"Conversions API" as its data source/) })
    })

    it('reads per-element statuses in a 200', () => {
      const body = { elements: [{ status: 201 }, { status: 400, error: { status: 400, message: 'Invalid conversion' } }, { status: 503 }] }
      expect(linkedin.parseResponse(reply({ status: 200, body }), three).map((o) => o.status)).toEqual(['sent', 'rejected', 'retry'])
    })

    it('rejects token, permission and version failures with what to fix', () => {
      const outcome = (r: ContractReply) => linkedin.parseResponse(reply(r), three.slice(0, 1))[0]!
      expect(outcome(linkedInErrors.revokedToken())).toEqual({ status: 'rejected', message: expect.stringMatching(/^LinkedIn REVOKED_ACCESS_TOKEN, serviceErrorCode 65601 \(HTTP 401\): The token used in the request has been revoked by the user\. .*refreshToken/) })
      expect(outcome(linkedInErrors.accessDenied())).toMatchObject({ status: 'rejected', message: expect.stringContaining('rw_conversions scope, or its member has no role') })
      expect(outcome(linkedInErrors.versionInactive('202508'))).toMatchObject({ status: 'rejected', message: expect.stringContaining(`no longer serves API version ${LINKEDIN_API_VERSION}`) })
    })

    // LinkedIn "Error Handling" (https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/error-handling):
    // a Rest.li body { status, serviceErrorCode, code, message } for each refusal.
    it('rejects each documented token refusal (empty, invalid 65600, revoked 65601, expired 65602) and a missing version', () => {
      for (const reply of [linkedInErrors.emptyToken(), linkedInErrors.invalidToken(), linkedInErrors.revokedToken(), linkedInErrors.expiredToken()]) {
        expect(linkedin.parseResponse(toResponse(reply), three.slice(0, 1))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('refreshToken') })
      }
      expect(linkedin.parseResponse(toResponse(linkedInErrors.versionMissing()), three.slice(0, 1))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('upgrade dcgate') })
    })

    it('retries a daily throttle at midnight UTC, a write conflict, and server errors', () => {
      const throttled = { ...linkedInErrors.throttled(), headers: { Date: 'Sat, 21 Nov 2026 20:00:00 GMT' } }
      expect(linkedin.parseResponse(reply(throttled), three.slice(0, 1))[0]).toMatchObject({ status: 'retry', retryAfterMs: 4 * 3_600_000 })
      expect(linkedin.parseResponse(reply(linkedInErrors.conflict()), three.slice(0, 1))[0]).toMatchObject({ status: 'retry' })
      expect(linkedin.parseResponse(reply({ status: 501, body: { status: 501, message: 'Not Implemented' } }), three.slice(0, 1))[0]).toMatchObject({ status: 'rejected' })
    })
  })

  describe('linkedin against the fake LinkedIn', () => {
    let fake: FakeLinkedIn
    const staticOpts = (overrides: Record<string, unknown> = {}) => options({ baseUrl: fake.url, accessToken: fake.accessToken, ...overrides })
    const refreshOpts = (overrides: Record<string, unknown> = {}) => v.parse(linkedInOptions, { ...fake.credentials, conversionRules: RULES, baseUrl: fake.url, oauthUrl: fake.oauthUrl, ...overrides })
    beforeAll(async () => {
      fake = await startFakeLinkedIn()
    })
    afterAll(() => fake?.close())

    it('accepts and records the mapped fixtures sent with the static token', async () => {
      const events = fixtureEvents(new Date())
      const before = fake.conversions.length
      expect(await deliver(events, staticOpts())).toEqual(events.map(() => ({ status: 'sent' })))
      expect(fake.conversions.slice(before).map((c) => [c.element.eventId, c.ruleId, c.attributed])).toEqual([['msg-purchase-0001', '101', true], ['msg-lead-0001', '102', true], ['msg-signup-0001', '103', true]])
      expect(fake.requests.at(-1)!.headers).toMatchObject({ 'authorization': `Bearer ${fake.accessToken}`, 'linkedin-version': LINKEDIN_API_VERSION, 'x-restli-method': 'BATCH_CREATE' })
    })

    it('exchanges the refresh token once and reuses the access token until five minutes before its 60 days end', async () => {
      const cache = memoryCache()
      const before = fake.tokenRequests.length
      const headers = await linkedin.authorize!(refreshOpts(), context(cache))
      expect(headers).toEqual({ Authorization: expect.stringMatching(/^Bearer AQV/) })
      expect(fake.tokenRequests.slice(before)).toEqual([{ grant_type: 'refresh_token', refresh_token: fake.credentials.refreshToken, client_id: fake.credentials.clientId, client_secret: fake.credentials.clientSecret }])
      expect(await linkedin.authorize!(refreshOpts(), context(cache))).toEqual(headers)
      expect(fake.tokenRequests.length).toBe(before + 1)
      const key = tokenCacheKey(fake.credentials)
      expect(cache.store.get(key)?.ttl).toBe(5_183_999 - 300)
      expect(key).not.toContain(fake.credentials.refreshToken)
      expect(await deliver([event()], refreshOpts(), context(cache))).toEqual([{ status: 'sent' }])
    })

    it('throws LinkedIn\'s OAuth error, with what to do, when the refresh is refused', async () => {
      const refused = await linkedin.authorize!(refreshOpts({ refreshToken: 'AQWrevoked' }), context()).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(LinkedInOAuthError)
      expect(refused).toMatchObject({ status: 400, retryable: false, message: expect.stringMatching(/invalid_request: The provided authorization grant or refresh token is invalid, expired or revoked \(refresh tokens last 365 days/) })
      await expect(linkedin.authorize!(refreshOpts({ clientSecret: 'wrong' }), context())).rejects.toThrow(/invalid_client: Client authentication failed \(check clientId and clientSecret/)
      fake.queue({ status: 503, body: '<html>Service Unavailable</html>', headers: { 'content-type': 'text/html' } })
      expect(await linkedin.authorize!(refreshOpts(), context()).catch((e: unknown) => e)).toMatchObject({ retryable: true, message: 'LinkedIn OAuth answered HTTP 503 without an access token: <html>Service Unavailable</html>' })
      const narrow = await startFakeLinkedIn({ scope: 'r_ads' })
      try {
        const opts = v.parse(linkedInOptions, { ...narrow.credentials, conversionRules: RULES, baseUrl: narrow.url, oauthUrl: narrow.oauthUrl })
        await expect(linkedin.authorize!(opts, context())).rejects.toThrow(/without the rw_conversions scope/)
      }
      finally {
        await narrow.close()
      }
    })

    it('rejects the batch with LinkedIn\'s reason when the token is wrong or revoked', async () => {
      expect((await deliver([event()], staticOpts({ accessToken: 'AQVwrong' })))[0]).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^LinkedIn INVALID_ACCESS_TOKEN, serviceErrorCode 65600 \(HTTP 401\): Invalid access token\. /) })
      const ctx = context()
      await linkedin.authorize!(refreshOpts(), ctx)
      fake.revokeTokens()
      expect((await deliver([event()], refreshOpts(), ctx))[0]).toMatchObject({ status: 'rejected' })
    })

    it('maps a partial failure back to its rows: the rows LinkedIn names are rejected, the rest retried and then recorded', async () => {
      const old = event({ messageId: 'too-old', occurredAt: new Date(Date.now() - 91 * 86_400_000) })
      const events = [event({ messageId: 'a' }), old, event({ messageId: 'c' }), event({ messageId: 'd', standardEvent: 'Purchase' })]
      const before = fake.conversions.length
      const outcomes = await deliver(events, staticOpts())
      expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry', 'retry'])
      expect(outcomes[1]).toMatchObject({ message: expect.stringContaining('/conversionHappenedAt :: conversion happened more than 90 days ago') })
      // LinkedIn refused the whole batch: nothing of it was recorded, so the others are sent again and accepted.
      expect(fake.conversions.length).toBe(before)
      const again = events.filter((_, i) => outcomes[i]!.status === 'retry')
      expect(await deliver(again, staticOpts())).toEqual(again.map(() => ({ status: 'sent' })))
      expect(fake.conversions.slice(before).map((c) => c.element.eventId)).toEqual(['a', 'c', 'd'])
    })

    it('sends nothing extra for a US opt-out: LinkedIn documents no limited-data-use signal (README "US privacy")', () => {
      // One moment for both: event() stamps occurredAt from the clock, and a millisecond between the two calls would
      // differ in conversionHappenedAt (the case failed in loaded full runs).
      const occurredAt = new Date(Date.now() - 3_600_000)
      const limited = event({ occurredAt, limitedDataUse: { country: 'us', state: 'ca' } })
      expect(linkedin.toRequest([limited], staticOpts()).body).toBe(linkedin.toRequest([event({ occurredAt })], staticOpts()).body)
      expect(skipReason(limited, staticOpts())).toBeUndefined()
    })

    it('declares 5,000 conversions a request and 3 requests a second', () => {
      expect([linkedin.maxBatchSize, linkedin.maxRequestsPerSecond]).toEqual([5000, 3])
    })

    it('takes a full batch of 5,000 and refuses 5,001', async () => {
      expect((await deliver(batchOf(5000, new Date()), staticOpts())).every((o) => o.status === 'sent')).toBe(true)
      const tooMany = await send(linkedin.toRequest(batchOf(5001, new Date()), staticOpts()), { Authorization: `Bearer ${fake.accessToken}` })
      expect(tooMany.status).toBe(400)
      expect(JSON.parse(tooMany.body).message).toBe('Batch size 5001 exceeds the maximum batch size of 5000')
    })

    it('refuses seconds instead of milliseconds, and an event older than 90 days fails alone while the rest is sent again', async () => {
      const request = linkedin.toRequest([event()], staticOpts())
      const body = JSON.parse(request.body) as BatchCreateBody
      body.elements[0]!.conversionHappenedAt = Math.floor(body.elements[0]!.conversionHappenedAt / 1000)
      const seconds = await send({ ...request, body: JSON.stringify(body) }, { Authorization: `Bearer ${fake.accessToken}` })
      expect(seconds.status).toBe(422)
      expect(JSON.parse(seconds.body).message).toMatch(/^Index: 0, ERROR :: \/conversionHappenedAt :: \d{10} is not an epoch timestamp in milliseconds/)

      const events = [event({ messageId: 'w1' }), event({ messageId: 'w2', occurredAt: new Date(Date.now() - 91 * 86_400_000) }), event({ messageId: 'w3' })]
      const outcomes = await deliver(events, staticOpts())
      expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry'])
      expect(outcomes[1]).toMatchObject({ message: expect.stringContaining('more than 90 days ago') })
      expect(await deliver([events[0]!, events[2]!], staticOpts())).toEqual([{ status: 'sent' }, { status: 'sent' }])
    })

    it('sends test-mode events to the test rule, which no campaign counts', async () => {
      const before = fake.conversions.length
      expect(await deliver([event({ messageId: 't1' })], staticOpts({ testConversionRule: '199' }))).toEqual([{ status: 'sent' }])
      expect(fake.conversions.slice(before)).toEqual([expect.objectContaining({ ruleId: '199', attributed: false })])
    })

    it('refuses an Insight Tag rule and a missing or sunset LinkedIn-Version', async () => {
      const tagRule = await startFakeLinkedIn({ rules: { 101: { method: 'INSIGHT_TAG', campaigns: 1 }, 102: { method: 'CONVERSIONS_API', campaigns: 1 } } })
      try {
        const outcomes = await deliver([event({ standardEvent: 'Lead' }), event({ standardEvent: 'Purchase' })], options({ baseUrl: tagRule.url, accessToken: tagRule.accessToken }))
        expect(outcomes).toEqual([{ status: 'retry', message: expect.any(String) }, { status: 'rejected', message: expect.stringContaining('Conversion\'s method should be CONVERSIONS_API') }])
      }
      finally {
        await tagRule.close()
      }
      const { 'LinkedIn-Version': _, ...noVersion } = linkedin.toRequest([event()], staticOpts()).headers
      const missing = await send({ ...linkedin.toRequest([event()], staticOpts()), headers: noVersion }, { Authorization: `Bearer ${fake.accessToken}` })
      expect(JSON.parse(missing.body)).toMatchObject({ status: 400, code: 'VERSION_MISSING' })
      const sunset = await send(linkedin.toRequest([event()], staticOpts()), { 'Authorization': `Bearer ${fake.accessToken}`, 'LinkedIn-Version': '202501' })
      expect(linkedin.parseResponse(sunset, [event()])[0]).toMatchObject({ status: 'rejected', message: expect.stringMatching(/NONEXISTENT_VERSION.*\(HTTP 426\): Requested version 202501 is not active/) })
    })
  })
}

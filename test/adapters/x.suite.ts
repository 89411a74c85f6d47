import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import x from '../../adapters/ads/x/index.ts'
import { signedHeader } from '../../adapters/ads/x/auth.ts'
import { skipReason, type XConversion, type XOptions } from '../../adapters/ads/x/map.ts'
import { hmacSha1Signature, oauth1Header, percentEncode, signatureBaseString, type OAuth1Credentials } from '../../adapters/ads/x/oauth1.ts'
import { X_ADS_API_VERSION } from '../../adapters/ads/x/version.ts'
import type { ConversionEvent, DeliveryOutcome, PlatformResponse } from '../../core/delivery/types.ts'
import type { AuthContext } from '../../core/registry.ts'
import { planDelivery, testAdPlatform, toResponse } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture, sha256 } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { startFakeX, xError, xErrors } from '../fakes/x.ts'

const fake = await startFakeX()
afterAll(() => fake.close())

const [PURCHASE, LEAD, SIGNUP, SCHEDULE, TEST_EVENT] = fake.eventIds as [string, string, string, string, string]
const options: XOptions = {
  consumerKey: fake.consumerKey,
  consumerSecret: fake.consumerSecret,
  accessToken: fake.accessToken,
  accessTokenSecret: fake.accessTokenSecret,
  pixelId: fake.pixelId,
  // Both spellings X accepts: the bare event id and tw-<pixel>-<event>.
  events: { Purchase: PURCHASE, Lead: `tw-${fake.pixelId}-${LEAD}`, CompleteRegistration: SIGNUP, Schedule: SCHEDULE },
  baseUrl: fake.url,
}
const resolved = v.parse(x.options, options)
const resolve = (overrides: Record<string, unknown>) => v.parse(x.options, { ...options, ...overrides })

const conversionsOf = (body: unknown) => (body as { conversions: XConversion[] }).conversions
const mapped = (events: ConversionEvent[], opts: XOptions = resolved) => conversionsOf(JSON.parse(x.toRequest(events, opts).body))
const one = (event: ConversionEvent, opts: XOptions = resolved) => mapped([event], opts)[0]!
const context = (): AuthContext => ({ fetch, cache: { get: async () => null, set: async () => {} }, signal: AbortSignal.timeout(5000) })

/** What the delivery pipeline does with one batch: authorize, map, send, classify. */
async function deliver(events: ConversionEvent[], opts: XOptions = resolved): Promise<{ response: PlatformResponse, outcomes: DeliveryOutcome[] }> {
  const response = await send(x.toRequest(events, opts), await x.authorize!(opts, context()))
  return { response, outcomes: x.parseResponse(response, events) }
}

testAdPlatform<XOptions>({
  adapter: x,
  folder: 'x',
  options,
  invalidOptions: [
    { ...options, consumerKey: undefined },
    { ...options, accessTokenSecret: '  ' },
    { ...options, pixelId: 'O8Z6J' },
    { ...options, events: {} },
    { ...options, events: { purchase: PURCHASE } },
    { ...options, events: { Purchase: 'not an id!' } },
    { ...options, events: { Purchase: `tw-otherpx-${PURCHASE}` } },
    { ...options, baseUrl: 'ads-api.x.com' },
    { ...options, testEventID: TEST_EVENT },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { request: { params: { account_id: fake.accountId } }, data: { conversions_processed: events.length, debug_id: 'ff02e052-36e4-47d6-bdf0-6d8986446562' } } }),
    // X refuses the whole request and lists errors without indices; one quoting the lead's conversion_time names it.
    partial: (events) => ({
      reply: xError(400, [{ code: 'INVALID_PARAMETER', message: `conversion_time (${events[1]!.occurredAt.toISOString()}) is more than 90 days in the past`, parameter: 'conversion_time' }], { account_id: fake.accountId }),
      statuses: ['retry', 'rejected', 'retry'],
    }),
    auth: { ...xErrors.unauthorized(), platformMessage: 'This request is not properly authenticated' },
    rateLimit: { ...xErrors.rateLimited(), platformMessage: 'Rate limit exceeded' },
    serverError: { ...xErrors.overCapacity(), platformMessage: 'Over capacity' },
  },
  countEvents: (body) => conversionsOf(body).length,
  // X deduplicates on conversion_id within one event, against the pixel too (48 h).
  dedupKeyIn: (body, event) => conversionsOf(body).some((conversion) => conversion.conversion_id === event.messageId),
  additionalTests: () => {
    oauthTests()
    requestTests()
    mappingTests()
    batchTests()
    responseTests()
  },
})

/** X's "Creating a signature" example, and what the fake makes of our signatures. */
function oauthTests(): void {
  describe('x: OAuth 1.0a signing', () => {
    const credentials: OAuth1Credentials = {
      consumerKey: 'xvz1evFS4wEEPTGEFPHBog',
      consumerSecret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw',
      token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb',
      tokenSecret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE',
    }
    const nonce = 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg'
    const oauthParams = { oauth_consumer_key: credentials.consumerKey, oauth_nonce: nonce, oauth_signature_method: 'HMAC-SHA1', oauth_timestamp: '1318622958', oauth_token: credentials.token, oauth_version: '1.0' }
    const example = (host: string) => ({ method: 'POST', url: `https://${host}/1.1/statuses/update.json?include_entities=true`, formParams: [['status', 'Hello Ladies + Gentlemen, a signed OAuth request!']] as const })

    it('builds the documented signature base string and signature (docs.x.com, and the api.twitter.com original)', () => {
      const base = signatureBaseString(example('api.x.com'), oauthParams)
      expect(base).toBe('POST&https%3A%2F%2Fapi.x.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521')
      const signature = hmacSha1Signature(base, credentials.consumerSecret, credentials.tokenSecret)
      expect(signature).toBe('Ls93hJiZbQ3akF3HF3x1Bz8/zU4=')
      expect(Buffer.from(signature, 'base64').toString('hex')).toBe('2ecf778498996d0dda905dc7177c75073f3fcd4e')
      const legacy = signatureBaseString(example('api.twitter.com'), oauthParams)
      expect(hmacSha1Signature(legacy, credentials.consumerSecret, credentials.tokenSecret)).toBe('hCtSmYh+iHYCEqBWrE7C7hYmtUk=')
    })

    it('writes the Authorization header as X\'s "Authorizing a request" page does: sorted, quoted, percent-encoded', () => {
      expect(oauth1Header(example('api.x.com'), credentials, nonce, 1318622958)).toBe(
        'OAuth oauth_consumer_key="xvz1evFS4wEEPTGEFPHBog", oauth_nonce="kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg", oauth_signature="Ls93hJiZbQ3akF3HF3x1Bz8%2FzU4%3D", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1318622958", oauth_token="370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb", oauth_version="1.0"',
      )
    })

    it('percent-encodes the reserved characters X lists, and leaves the unreserved ones', () => {
      expect(percentEncode('!#$&\'()*+,/:;=?@[]')).toBe('%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D')
      expect(percentEncode('aZ09-._~ é')).toBe('aZ09-._~%20%C3%A9')
    })

    it('signs a form body but not a JSON one; the port stays in the signed URL unless it is the default', () => {
      const request = { method: 'POST', url: 'https://ads-api.x.com/12/measurement/conversions/o8z6j' }
      const withForm = signatureBaseString({ ...request, formParams: [['conversions', '[]']] }, oauthParams)
      expect(withForm).not.toBe(signatureBaseString(request, oauthParams))
      expect(signatureBaseString({ ...request, url: 'HTTPS://ADS-API.X.COM:443/12/measurement/conversions/o8z6j' }, oauthParams)).toBe(signatureBaseString(request, oauthParams))
      expect(signatureBaseString({ ...request, url: 'http://127.0.0.1:8080/12/x' }, oauthParams)).toContain('http%3A%2F%2F127.0.0.1%3A8080%2F12%2Fx&')
    })

    it('authorize signs the URL toRequest sends to, with a fresh nonce and the current time on every call', async () => {
      const first = (await x.authorize!(resolved, context())).authorization!
      const second = (await x.authorize!(resolved, context())).authorization!
      const field = (header: string, key: string) => new RegExp(`${key}="([^"]*)"`).exec(header)?.[1]
      expect(field(first, 'oauth_nonce')).not.toBe(field(second, 'oauth_nonce'))
      expect(Math.abs(Number(field(first, 'oauth_timestamp')) - Date.now() / 1000)).toBeLessThan(5)
      const creds = { consumerKey: fake.consumerKey, consumerSecret: fake.consumerSecret, token: fake.accessToken, tokenSecret: fake.accessTokenSecret }
      const url = x.toRequest([leadFixture()], resolved).url
      expect(url).toBe(`${fake.url}/${X_ADS_API_VERSION}/measurement/conversions/${fake.pixelId}`)
      expect(signedHeader(resolved, 'n0nce', 1_700_000_000)).toBe(oauth1Header({ method: 'POST', url }, creds, 'n0nce', 1_700_000_000))
    })

    it('the fake checks the signature for real: a wrong secret, another URL, a stale timestamp or a replayed nonce get X\'s 401', async () => {
      const events = [leadFixture(new Date())]
      const request = x.toRequest(events, resolved)
      const expectUnauthorized = async (response: PlatformResponse) => {
        expect(response.status).toBe(401)
        expect(JSON.parse(response.body)).toEqual({ errors: [{ code: 'UNAUTHORIZED_ACCESS', message: 'This request is not properly authenticated' }], request: { params: {} } })
      }
      await expectUnauthorized(await send(request, await x.authorize!({ ...resolved, consumerSecret: 'wrong' }, context())))
      await expectUnauthorized(await send(request, await x.authorize!({ ...resolved, accessTokenSecret: 'wrong' }, context())))
      await expectUnauthorized(await send({ ...request, url: `${request.url}?extra=1` }, await x.authorize!(resolved, context())))
      await expectUnauthorized(await send(request, { authorization: signedHeader(resolved, 'staleNonce1', Math.floor(Date.now() / 1000) - 3600) }))
      await expectUnauthorized(await send(request, {}))
      const headers = await x.authorize!(resolved, context())
      expect((await send(request, headers)).status).toBe(200)
      await expectUnauthorized(await send(request, headers))
      // The JSON body is not signed: X (and the fake) accept a body changed after signing.
      expect((await send({ ...request, body: JSON.stringify({ conversions: [one(registrationFixture(new Date()))] }) }, await x.authorize!(resolved, context()))).status).toBe(200)
    })

    it('a refused signature is rejected with X\'s words and what to check', async () => {
      const events = fixtureEvents(new Date())
      const { outcomes } = await deliver(events, { ...resolved, consumerSecret: 'revoked' })
      for (const outcome of outcomes) {
        expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringContaining('UNAUTHORIZED_ACCESS: This request is not properly authenticated') })
        expect(outcome).toMatchObject({ message: expect.stringContaining('accessToken/accessTokenSecret') })
      }
    })
  })
}

/** What reaches X, end to end through the fake. */
function requestTests(): void {
  describe('x: what reaches the Conversions API', () => {
    it('the fake accepts the whole mapped request, records it, and the answer parses as sent', async () => {
      const events = fixtureEvents(new Date())
      const { response, outcomes } = await deliver(events)
      expect(response.status).toBe(200)
      expect(JSON.parse(response.body)).toMatchObject({ request: { params: { account_id: fake.accountId } }, data: { conversions_processed: 3 } })
      expect(fake.conversions.slice(-3).map((c) => c.conversion_id)).toEqual(events.map((e) => e.messageId))
      expect(outcomes).toEqual(events.map(() => ({ status: 'sent' })))
    })

    it('the fake takes a full batch of 500 and refuses 501 with "Conversion count limit is 500" → rejected', async () => {
      expect((await deliver(batchOf(500, new Date()))).response.status).toBe(200)
      const { response, outcomes } = await deliver(batchOf(501, new Date()))
      expect(response.status).toBe(400)
      expect(outcomes[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('INVALID_PARAMETER: Conversion count limit is 500 [conversions]') })
    })

    it('sends conversion_time as ISO-8601 with milliseconds in UTC; the fake refuses X\'s documented bad format', async () => {
      const event = leadFixture(new Date('2026-03-02T10:00:00.000Z'))
      expect(one(event).conversion_time).toBe('2026-03-02T09:30:00.000Z')
      const good = one(leadFixture(new Date()))
      const response = await send({ ...x.toRequest([], resolved), body: JSON.stringify({ conversions: [{ ...good, conversion_time: '2022-06-16T01:14:00.603' }] }) }, await x.authorize!(resolved, context()))
      expect(JSON.parse(response.body).errors).toEqual([{ code: 'INVALID_PARAMETER', message: 'Expected Time in yyyy-MM-ddTHH:mm:ss.SSSZ, got "2022-06-16T01:14:00.603" for conversion_time', parameter: 'conversion_time' }])
    })

    it('declares 500 per request and a 90-day window; the fake refuses a conversion older than 90 days', async () => {
      expect([x.maxBatchSize, x.maxEventAgeDays]).toEqual([500, 90])
      const old = { ...leadFixture(), occurredAt: new Date(Date.now() - 91 * 86_400_000) }
      const { response } = await deliver([old])
      expect(JSON.parse(response.body).errors[0]).toMatchObject({ parameter: 'conversion_time', message: expect.stringContaining('more than 90 days') })
    })

    it('refuses a hand-made raw email with X\'s message; the answer is rejected quoting it', async () => {
      const bad = { ...one(leadFixture(new Date())), identifiers: [{ hashed_email: 'abc' }] }
      const response = await send({ ...x.toRequest([], resolved), body: JSON.stringify({ conversions: [bad] }) }, await x.authorize!(resolved, context()))
      expect(response.status).toBe(400)
      expect(x.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('hashed_email (abc) is not a valid SHA-256 hash') })
    })

    it('an event id of another account gets X\'s 404 pair of errors → rejected, pointing at the events mapping', async () => {
      const { response, outcomes } = await deliver([leadFixture(new Date())], resolve({ events: { Lead: 'abc' } }))
      expect(response.status).toBe(404)
      expect(JSON.parse(response.body).errors.map((e: { code: string }) => e.code)).toEqual(['NOT_FOUND', 'INVALID_PARAMETER'])
      expect(outcomes[0]).toMatchObject({ status: 'rejected', message: expect.stringMatching(/event_id \(abc\) does not belong to provided account.*Check the events mapping/) })
    })

    it('test mode sends every mapped event to testEventId; the fake files them under it; unmapped events stay skipped', async () => {
      const testing = resolve({ testEventId: TEST_EVENT, events: { Purchase: PURCHASE, Lead: LEAD } })
      expect(one(leadFixture(), testing).event_id).toBe(TEST_EVENT)
      expect((await deliver([leadFixture(new Date()), purchaseFixture(new Date())], testing)).response.status).toBe(200)
      expect(fake.conversions.slice(-2).map((c) => c.event_id)).toEqual([TEST_EVENT, TEST_EVENT])
      expect(skipReason(registrationFixture(), testing)).toMatch(/no X event id is configured for CompleteRegistration/)
      expect(one(leadFixture()).event_id).toBe(`tw-${fake.pixelId}-${LEAD}`)
    })
  })
}

/** Batches, X's rate and a US opt-out. */
function batchTests(): void {
  describe('x: batches and US privacy', () => {
    it('declares 500 conversions a request and 60 requests a second (under 60,000 events and 100,000 requests per 15 minutes)', () => {
      expect([x.maxBatchSize, x.maxRequestsPerSecond]).toEqual([500, 60])
    })

    it('maps a partial failure back to its conversion: the one X\'s error quotes is rejected, the others retried and then recorded', async () => {
      const old = { ...leadFixture(new Date()), messageId: 'msg-x-old', occurredAt: new Date(Date.now() - 91 * 86_400_000) }
      const events = [purchaseFixture(new Date()), old, registrationFixture(new Date())]
      const before = fake.conversions.length
      const { response, outcomes } = await deliver(events)
      expect(response.status).toBe(400)
      expect(fake.conversions.length).toBe(before)
      expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry'])
      expect(outcomes[1]).toMatchObject({ message: expect.stringContaining(`conversion_time (${old.occurredAt.toISOString()}) is more than 90 days in the past [conversion_time]`) })
      expect(outcomes[0]).toMatchObject({ message: expect.stringContaining('because of other conversions in it') })
      const again = events.filter((_, i) => outcomes[i]!.status === 'retry')
      expect((await deliver(again)).outcomes).toEqual([{ status: 'sent' }, { status: 'sent' }])
      expect(fake.conversions.slice(before).map((c) => c.conversion_id)).toEqual(['msg-purchase-0001', 'msg-signup-0001'])
    })

    it('keeps one outcome for all when an error names no conversion, or every one of them', () => {
      const events = fixtureEvents()
      const statuses = (errors: { code: string, message: string, parameter?: string }[]) => x.parseResponse(toResponse(xError(400, errors)), events).map((o) => o.status)
      expect(statuses([{ code: 'INVALID_PARAMETER', message: 'At least one user identifier must be provided', parameter: '' }])).toEqual(['rejected', 'rejected', 'rejected'])
      expect(statuses([{ code: 'INVALID_PARAMETER', message: 'Conversion count limit is 500', parameter: 'conversions' }])).toEqual(['rejected', 'rejected', 'rejected'])
      expect(statuses([{ code: 'INVALID_PARAMETER', message: `hashed_email (${HASHED_PERSON.email}) is not a valid SHA-256 hash`, parameter: 'hashed_email' }])).toEqual(['rejected', 'rejected', 'rejected'])
    })

    it('skips a US opt-out, saying why: X asks senders to filter out people who opted out of the sale of their data', () => {
      const limited = { ...leadFixture(), limitedDataUse: { country: 'us', state: 'ca' } }
      expect(skipReason(limited, resolved)).toMatch(/opted out of the sale or sharing .* X asks senders to filter out/)
      expect(planDelivery(x, [limited, purchaseFixture()], resolved)).toMatchObject({ refused: { 'msg-lead-0001': expect.any(String) }, sent: [{ messageId: 'msg-purchase-0001' }] })
    })
  })
}

/** X's identifier, value and mapping rules. */
function mappingTests(): void {
  describe('x: mapping', () => {
    it('hashes per X\'s vectors: phone is E.164 with "+" (phoneE164), email trimmed and lower-cased (email variant)', () => {
      expect(sha256('+11234567890')).toBe('1fa6b8d986d9b9cd01bf36951815158bbde9f520c0567c835dfe34783d0a4231')
      expect(sha256('test-email@test.com')).toBe('e586883b2b4faf78d48300a79e0e15138d664cdf796ffb86e533170a9893eda8')
      // X's guide labels this hash test@x.com; it is the hash of test@twitter.com.
      expect(sha256('test@twitter.com')).toBe('d360d510a224510f373931ce2d6215a799f5a9c1cef221b0149b6b6b50cced62')
      const event = { ...leadFixture(), identity: { email: sha256('test-email@test.com'), emailGoogle: sha256('testemail@test.com'), phoneE164: sha256('+11234567890'), phoneDigits: sha256('11234567890') } }
      expect(one(event).identifiers).toEqual([
        { hashed_email: 'e586883b2b4faf78d48300a79e0e15138d664cdf796ffb86e533170a9893eda8' },
        { hashed_phone_number: '1fa6b8d986d9b9cd01bf36951815158bbde9f520c0567c835dfe34783d0a4231' },
      ])
    })

    it('sends twclid first, then email, phone, and IP with user agent in one object', () => {
      const event = { ...purchaseFixture(), clickIds: { twclid: ' 23opevjt88psuo13lu8d020qkn ' } }
      expect(one(event).identifiers).toEqual([
        { twclid: '23opevjt88psuo13lu8d020qkn' },
        { hashed_email: HASHED_PERSON.email },
        { hashed_phone_number: HASHED_PERSON.phoneE164 },
        { ip_address: event.ip, user_agent: event.userAgent },
      ])
    })

    it('skips an event with only IP and user agent (or nothing) for X to match, saying why; the rest are sent', async () => {
      const anonymous: ConversionEvent = { ...purchaseFixture(new Date()), messageId: 'msg-anonymous', identity: {}, clickIds: {} }
      expect(skipReason(anonymous, resolved)).toBe('no twclid, hashed email or hashed phone number for X to match (an IP address and user agent only count beside one of them)')
      const events = [leadFixture(new Date()), anonymous, registrationFixture(new Date())]
      const plan = planDelivery(x, events, resolved)
      expect(plan.refused).toEqual({ 'msg-anonymous': expect.stringMatching(/^no twclid/) })
      expect(conversionsOf(JSON.parse(plan.request!.body)).map((c) => c.conversion_id)).toEqual(['msg-lead-0001', 'msg-signup-0001'])
      const { outcomes } = await deliver(plan.sent)
      expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent'])
      expect(skipReason({ ...anonymous, clickIds: { twclid: 'abc' } }, resolved)).toBeUndefined()
    })

    it('skips a standard event with no X event id, naming the option to set; it is never in a request', () => {
      const purchaseOnly = resolve({ events: { Purchase: PURCHASE } })
      expect(skipReason(leadFixture(), purchaseOnly)).toBe('no X event id is configured for Lead (set events.Lead in the x destination)')
      expect(skipReason(purchaseFixture(), purchaseOnly)).toBeUndefined()
      expect(planDelivery(x, [leadFixture()], purchaseOnly)).toEqual({ refused: { 'msg-lead-0001': expect.stringContaining('set events.Lead') }, sent: [] })
    })

    it('takes the event mapping from each site\'s options', () => {
      const other = resolve({ events: { Purchase: 'oabc1', Schedule: 'oabc4' } })
      expect(one(purchaseFixture(), other).event_id).toBe('oabc1')
      expect(one({ ...leadFixture(), standardEvent: 'Schedule' }, other).event_id).toBe('oabc4')
      expect(one(purchaseFixture()).event_id).toBe(PURCHASE)
    })

    it('adUserData denied keeps everything but twclid back; with nothing left the event is skipped, saying why', () => {
      const consent = { adUserData: 'denied', adPersonalization: 'denied' } as const
      const denied = { ...purchaseFixture(), consent, clickIds: { twclid: 'twc-1' } }
      expect(one(denied).identifiers).toEqual([{ twclid: 'twc-1' }])
      expect(skipReason({ ...leadFixture(), consent }, resolved)).toBe('no twclid, and the visitor denied ad user data, so no hashed email or phone number may go to X')
      expect(one({ ...purchaseFixture(), consent: { adUserData: 'granted', adPersonalization: 'denied' } }).identifiers).toHaveLength(3)
    })

    it('maps value, currency, item count and contents; a value without a currency is left out', () => {
      const conversion = one(purchaseFixture())
      expect(conversion).toMatchObject({
        value: 129.85, price_currency: 'EUR', number_items: 3, conversion_id: 'msg-purchase-0001', event_id: PURCHASE,
        contents: [
          { content_id: 'SHIRT-RED-M', content_name: 'Red shirt', content_type: 'Shirts', content_price: 39.95, num_items: 2 },
          { content_id: 'CAP-BLK', content_name: 'Black cap', content_price: 49.95, num_items: 1 },
        ],
      })
      const { currency: _currency, ...noCurrency } = purchaseFixture()
      expect(one(noCurrency)).not.toHaveProperty('value')
      expect(one(registrationFixture())).not.toHaveProperty('number_items')
    })

    it('leaves out identity values that are not SHA-256 digests instead of sending them', () => {
      const leaky = { ...leadFixture(), clickIds: { twclid: 'twc-2' }, identity: { email: 'marguerite.okonkwo@gmail.com', phoneE164: HASHED_PERSON.phoneE164.toUpperCase() } }
      expect(one(leaky).identifiers).toEqual([{ twclid: 'twc-2' }])
    })

    it('fills in X\'s host and refuses a tw- event id of another pixel, with a message', () => {
      const { baseUrl: _baseUrl, ...noBase } = options
      expect(v.parse(x.options, noBase).baseUrl).toBe('https://ads-api.x.com')
      expect(x.toRequest([leadFixture()], v.parse(x.options, noBase)).url).toBe(`https://ads-api.x.com/12/measurement/conversions/${fake.pixelId}`)
      const result = v.safeParse(x.options, { ...options, testEventId: `tw-zzz-${TEST_EVENT}` })
      expect(result.issues?.[0]?.message).toBe('an event id written tw-<pixel>-<event> names another pixel than pixelId')
    })
  })
}

/** X's answers, one by one. */
function responseTests(): void {
  describe('x: reading X\'s answers', () => {
    const events = [leadFixture()]
    const outcome = (reply: Parameters<typeof toResponse>[0]) => x.parseResponse(toResponse(reply), events)[0]

    it('waits until x-rate-limit-reset, measured from the answer\'s Date; Retry-After wins when both are there', () => {
      const date = 'Mon, 02 Mar 2026 10:00:00 GMT'
      const resetAt = Date.parse(date) / 1000 + 240
      expect(outcome({ ...xErrors.rateLimited(resetAt), headers: { ...xErrors.rateLimited(resetAt).headers, Date: date } })).toEqual({ status: 'retry', message: 'X answered HTTP 429: TOO_MANY_REQUESTS: Rate limit exceeded', retryAfterMs: 240_000 })
      expect(outcome({ ...xErrors.rateLimited(resetAt), headers: { ...xErrors.rateLimited(resetAt).headers, 'Date': date, 'Retry-After': '5' } })).toMatchObject({ retryAfterMs: 5000 })
      expect(outcome(xErrors.rateLimited())).not.toHaveProperty('retryAfterMs')
    })

    it('retries server errors, timeouts and lock timeouts; rejects access errors with what to fix', () => {
      expect(outcome(xErrors.internal())).toMatchObject({ status: 'retry', message: expect.stringContaining('INTERNAL_ERROR: Internal error') })
      expect(outcome(xError(408, [{ code: 'CANCELLED_REQUEST', message: 'Request was cancelled' }]))).toMatchObject({ status: 'retry' })
      expect(outcome(xError(423, [{ code: 'LOCK_ACQUISITION_TIMEOUT', message: 'Lock acquisition timeout' }]))).toMatchObject({ status: 'retry' })
      expect(outcome(xErrors.unauthorizedClient())).toMatchObject({ status: 'rejected', message: expect.stringContaining('Ads API access form') })
      expect(outcome(xErrors.noAccountAccess('370773112', fake.accountId))).toMatchObject({ status: 'rejected', message: expect.stringContaining('AD_MANAGER or ACCOUNT_ADMIN') })
    })

    // X's documented bodies (web-conversions guide, "Conversion API error codes":
    // https://docs.x.com/x-ads-api/measurement/web-conversions): each is refused for good.
    it('rejects each documented 400, 403 and 404 body', () => {
      const documented = [
        xError(400, [{ code: 'INVALID_PARAMETER', message: 'event_id (o6dkt) is not a single event tag (SET)', parameter: 'event_id' }], { account_id: '18ce552mlaq' }),
        xError(400, [{ code: 'INVALID_PARAMETER', message: 'Expected Time in yyyy-MM-ddTHH:mm:ss.SSSZ, got "2022-06-16T01:14:00.603" for conversion_time', parameter: 'conversion_time' }], { account_id: '18ce552mlaq' }),
        xError(404, [{ code: 'ROUTE_NOT_FOUND', message: 'The requested resource could not be found' }]),
        xErrors.unauthorizedClient(),
        xErrors.noAccountAccess('370773112', fake.accountId),
      ]
      for (const reply of documented) expect(outcome(reply), JSON.stringify(reply.body)).toMatchObject({ status: 'rejected' })
    })

    it('quotes every error X lists, with its parameter', () => {
      const reply = xError(400, [
        { code: 'INVALID_PARAMETER', message: 'At least one user identifier must be provided', parameter: '' },
        { code: 'INVALID_PARAMETER', message: 'hashed_email (abc) is not a valid SHA-256 hash', parameter: 'hashed_email' },
      ], { account_id: '18ce552mlaq' })
      expect(outcome(reply)).toEqual({ status: 'rejected', message: 'X answered HTTP 400: INVALID_PARAMETER: At least one user identifier must be provided; INVALID_PARAMETER: hashed_email (abc) is not a valid SHA-256 hash [hashed_email]' })
    })

    it('a live 429 from the fake is retried after its reset time', async () => {
      fake.queue(xErrors.rateLimited(Math.floor(Date.now() / 1000) + 60))
      const { outcomes } = await deliver([leadFixture(new Date())])
      expect(outcomes[0]).toMatchObject({ status: 'retry' })
      expect((outcomes[0] as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(55_000)
    })
  })
}

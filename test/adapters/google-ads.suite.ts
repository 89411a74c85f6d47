import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import googleAds, { googleAdsOptions, type GoogleAdsOptions } from '../../adapters/ads/google-ads/index.ts'
import { skipReason } from '../../adapters/ads/google-ads/map.ts'
import { GoogleOAuthError, tokenCacheKey } from '../../adapters/ads/google-ads/auth.ts'
import { toConversionDateTime, type UploadClickConversionsBody } from '../../adapters/ads/google-ads/map.ts'
import { GOOGLE_ADS_API_VERSION } from '../../adapters/ads/google-ads/version.ts'
import type { ConversionEvent, DeliveryOutcome } from '../../core/delivery/types.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { createRegistry, type AuthContext } from '../../core/registry.ts'
import { planDelivery, testAdPlatform } from '../contract/ad-platform.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { send } from '../fakes/helpers.ts'

const sha = (text: string) => createHash('sha256').update(text).digest('hex')
const CUSTOMER = '1234567890'

function options(overrides: Record<string, unknown> = {}): GoogleAdsOptions {
  return v.parse(googleAdsOptions, {
    customerId: '123-456-7890',
    developerToken: 'dev-token-22-characters',
    clientId: 'fake-client.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-fake-secret',
    refreshToken: '1//fake-refresh-token',
    conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' },
    ...overrides,
  })
}

function event(overrides: Partial<ConversionEvent> = {}): ConversionEvent {
  return {
    messageId: 'msg-1', siteId: 'demo', event: 'order_paid', standardEvent: 'Purchase',
    occurredAt: new Date('2026-11-20T09:08:07.654Z'), value: 49.9, currency: 'EUR', orderId: 'order-1', items: [], channel: 'online',
    identity: { email: sha('john.smith@gmail.com'), emailGoogle: sha('johnsmith@gmail.com'), phoneE164: sha('+16505551212'), phoneDigits: sha('16505551212') },
    clickIds: { gclid: 'Cj0KCQiA-fake-gclid' },
    ip: '203.0.113.7', userAgent: 'Mozilla/5.0',
    consent: { adUserData: 'granted', adPersonalization: 'granted' }, confirmation: 'payment_confirmed',
    ...overrides,
  }
}

function body(events: ConversionEvent[], opts = options()) {
  return JSON.parse(googleAds.toRequest(events, opts).body)
}

function memoryCache() {
  const store = new Map<string, { value: string, ttl: number }>()
  return { store, get: async (key: string) => store.get(key)?.value ?? null, set: async (key: string, value: string, ttl: number) => void store.set(key, { value, ttl }) }
}
const context = (cache = memoryCache()): AuthContext => ({ fetch, cache, signal: AbortSignal.timeout(5000) })

/** What the delivery pipeline does with one batch: authorize, map, send, classify. */
async function deliver(events: ConversionEvent[], opts: GoogleAdsOptions, ctx: AuthContext): Promise<DeliveryOutcome[]> {
  const headers = await googleAds.authorize!(opts, ctx)
  const request = googleAds.toRequest(events, opts)
  return googleAds.parseResponse(await send(request, headers), events)
}

const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => ({ status, headers: new Headers(headers), body: typeof payload === 'string' ? payload : JSON.stringify(payload) })
const adsFailure = (errors: unknown[]) => [{ '@type': `type.googleapis.com/google.ads.googleads.${GOOGLE_ADS_API_VERSION}.errors.GoogleAdsFailure`, errors, requestId: 'gHkT3jq4Ws2rV7vTf2u1Qw' }]

const CONTRACT_OPTIONS: GoogleAdsOptions = {
  customerId: CUSTOMER,
  clientId: 'fake-client.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-fake-secret',
  refreshToken: '1//fake-refresh-token',
  conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' },
  validateOnly: false,
  baseUrl: 'http://127.0.0.1:9/google-ads',
  oauthUrl: 'http://127.0.0.1:9/token',
}
const failure = (code: number, status: string, message: string, errors: unknown[] = []) => ({ error: { code, message, status, details: errors.length ? adsFailure(errors) : [] } })
const rowAt = (index: number, field: string) => ({ fieldPathElements: [{ fieldName: 'conversions', index }, { fieldName: field }] })
const uploaded = (request: unknown) => (request as UploadClickConversionsBody).conversions

testAdPlatform<GoogleAdsOptions>({
  adapter: googleAds,
  folder: 'google-ads',
  options: CONTRACT_OPTIONS,
  invalidOptions: [
    { ...CONTRACT_OPTIONS, customerId: '123-456-789' },
    { ...CONTRACT_OPTIONS, conversionActions: {} },
    { ...CONTRACT_OPTIONS, conversionActions: { purchase: '111' } },
    { ...CONTRACT_OPTIONS, conversionActions: { Purchase: 'AW-123456789/AbC-D_efG' } }, // a gtag send_to label, not an action id
    { ...CONTRACT_OPTIONS, baseUrl: 'googleads.googleapis.com' },
    { ...CONTRACT_OPTIONS, refreshToken: '' },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { results: uploaded(JSON.parse(googleAds.toRequest(events, CONTRACT_OPTIONS).body)).map(({ gclid, conversionAction, conversionDateTime }) => ({ gclid, conversionAction, conversionDateTime })), jobId: '2147483990' } }),
    partial: (events) => ({
      reply: {
        status: 200,
        body: {
          partialFailureError: {
            code: 3,
            message: 'The imported gclid could not be decoded., at conversions[1].gclid, The click associated with the given identifier or iOS URL parameter occurred less than 6 hours ago. Retry after 6 hours have passed., at conversions[2].gclid',
            details: adsFailure([
              { errorCode: { conversionUploadError: 'UNPARSEABLE_GCLID' }, message: 'The imported gclid could not be decoded.', location: rowAt(1, 'gclid') },
              { errorCode: { conversionUploadError: 'TOO_RECENT_EVENT' }, message: 'The click associated with the given identifier or iOS URL parameter occurred less than 6 hours ago. Retry after 6 hours have passed.', location: rowAt(2, 'gclid') },
            ]),
          },
          results: events.map((_, i) => i === 0 ? { gclid: 'Cj0KCQiA5fetBhC9ARIsAP1UMgH0', conversionAction: `customers/${CUSTOMER}/conversionActions/111`, conversionDateTime: '2026-03-02 08:00:00+00:00' } : {}),
          jobId: '2147483991',
        },
      },
      statuses: ['sent', 'rejected', 'retry'],
    }),
    auth: { status: 401, body: failure(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'), platformMessage: 'Request had invalid authentication credentials.' },
    rateLimit: {
      status: 429,
      body: failure(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', [{ errorCode: { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' }, message: 'Too many requests in a short amount of time.', details: { quotaErrorDetails: { rateScope: 'DEVELOPER', rateName: 'Requests per developer per minute', retryDelay: '45s' } } }]),
      platformMessage: 'Too many requests in a short amount of time.',
    },
    serverError: { status: 503, body: failure(503, 'UNAVAILABLE', 'The service is currently unavailable.'), platformMessage: 'The service is currently unavailable.' },
  },
  countEvents: (request) => uploaded(request).length,
  dedupKeyIn: (request, event) => uploaded(request).some((conversion) => conversion.orderId === event.messageId),
  additionalTests: googleSpecificTests,
})

/** Google's own rules, beside the shared contract. */
function googleSpecificTests(): void {
  describe('google_ads options', () => {
    it('keeps the digits of ids given with dashes or as numbers, and fills in Google\'s URLs', () => {
      const parsed = options({ customerId: 1234567890, loginCustomerId: '987-654-3210', conversionActions: { Lead: 6543210987 } })
      expect(parsed).toMatchObject({ customerId: CUSTOMER, loginCustomerId: '9876543210', conversionActions: { Lead: '6543210987' }, validateOnly: false, baseUrl: 'https://googleads.googleapis.com', oauthUrl: 'https://oauth2.googleapis.com/token' })
    })

    it('refuses a short customer id, a misspelt standard event and an empty action map, naming each', () => {
      const result = v.safeParse(googleAdsOptions, { ...options(), customerId: '123-456-789', conversionActions: { purchase: '1' } })
      expect(result.success).toBe(false)
      const messages = result.issues!.map((i) => `${i.path?.map((p) => p.key).join('.')}: ${i.message}`)
      expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/^customerId: must be the Google Ads customer id .*10 digits/), expect.stringMatching(/^conversionActions\.purchase: unknown key/)]))
      const empty = v.safeParse(googleAdsOptions, { ...options(), conversionActions: {} })
      expect(empty.issues?.[0]?.message).toBe('must give at least one conversion action id')
    })

    it('refuses a misspelt option (they were dropped silently once), so boot stops naming its path', () => {
      const site = { id: 'demo', name: 'Demo', destinations: { google_ads: { ...options(), validateonly: true } } }
      let error: unknown
      try {
        createRegistry([googleAds], resolveConfig({ sites: [site] }, {}).sites)
      }
      catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(BootError)
      expect((error as BootError).details).toEqual(['sites[0].destinations.google_ads.validateonly: unknown key (check its spelling)'])
    })

    it('needs no developer token (Google sunset them; the header is ignored)', () => {
      const { developerToken: _, ...rest } = options()
      expect(v.safeParse(googleAdsOptions, rest).success).toBe(true)
    })
  })

  describe('google_ads mapping', () => {
    it('posts all events to the pinned version\'s uploadClickConversions, with partial failure on', () => {
      const request = googleAds.toRequest([event(), event({ messageId: 'msg-2', orderId: 'order-2' })], options())
      expect(request).toMatchObject({ method: 'POST', url: `https://googleads.googleapis.com/${GOOGLE_ADS_API_VERSION}/customers/${CUSTOMER}:uploadClickConversions`, headers: { 'content-type': 'application/json' } })
      const sent = JSON.parse(request.body)
      expect(sent.partialFailure).toBe(true)
      expect(sent).not.toHaveProperty('validateOnly')
      expect(sent.conversions).toHaveLength(2)
      expect(body([event()], options({ validateOnly: true })).validateOnly).toBe(true)
    })

    it('writes the conversion time as "yyyy-mm-dd hh:mm:ss+00:00" in UTC', () => {
      expect(toConversionDateTime(new Date('2026-03-04T05:06:07.890Z'))).toBe('2026-03-04 05:06:07+00:00')
      expect(toConversionDateTime(new Date('2026-12-31T23:59:59+02:00'))).toBe('2026-12-31 21:59:59+00:00')
      expect(body([event()]).conversions[0]).toMatchObject({ conversionDateTime: '2026-11-20 09:08:07+00:00', conversionValue: 49.9, currencyCode: 'EUR' })
    })

    it('sends each standard event to its own conversion action', () => {
      const standard = ['Purchase', 'Lead', 'CompleteRegistration', 'Schedule'] as const
      const sent = body(standard.map((standardEvent, i) => event({ standardEvent, messageId: `m${i}`, orderId: undefined })))
      expect(sent.conversions.map((c: { conversionAction: string }) => c.conversionAction)).toEqual(['111', '222', '333', '444'].map((id) => `customers/${CUSTOMER}/conversionActions/${id}`))
    })

    it('deduplicates on the message id, Google\'s orderId, as every adapter does', () => {
      const sent = body([event(), event({ messageId: 'msg-no-order', orderId: undefined })])
      expect(sent.conversions.map((c: { orderId: string }) => c.orderId)).toEqual(['msg-1', 'msg-no-order'])
    })

    it('sends one click id: gclid, else gbraid, else wbraid', () => {
      const ids = (clickIds: ConversionEvent['clickIds']) => {
        const { gclid, gbraid, wbraid } = body([event({ clickIds })]).conversions[0]
        return { gclid, gbraid, wbraid }
      }
      expect(ids({ gclid: 'G', gbraid: 'B', wbraid: 'W', fbc: 'fb.1.1.x' })).toEqual({ gclid: 'G' })
      expect(ids({ gbraid: 'B', wbraid: 'W' })).toEqual({ gbraid: 'B' })
      expect(ids({ wbraid: 'W' })).toEqual({ wbraid: 'W' })
      expect(ids({})).toEqual({})
    })

    it('sends ad-user-data consent as Google\'s enum, and never ad personalization (not allowed on click uploads)', () => {
      const consent = (adUserData: 'granted' | 'denied' | 'unknown') => body([event({ consent: { adUserData, adPersonalization: 'granted' } })]).conversions[0].consent
      expect(consent('granted')).toEqual({ adUserData: 'GRANTED' })
      expect(consent('denied')).toEqual({ adUserData: 'DENIED' })
      expect(consent('unknown')).toEqual({ adUserData: 'UNSPECIFIED' })
    })

    it('identifies the user by Google\'s email hash (gmail dots removed) and the E.164 phone hash, and nothing else', () => {
      const [conversion] = body([event()]).conversions
      expect(conversion.userIdentifiers).toEqual([
        { userIdentifierSource: 'FIRST_PARTY', hashedEmail: sha('johnsmith@gmail.com') },
        { userIdentifierSource: 'FIRST_PARTY', hashedPhoneNumber: '1e231c66011e7a2d867a9cfae267a6aff103cf4913640b6e71a99850fc0ffbc8' },
      ])
      const text = JSON.stringify(conversion)
      for (const other of [sha('john.smith@gmail.com'), sha('16505551212'), '203.0.113.7', 'Mozilla']) expect(text).not.toContain(other)
    })

    it('never sends a value that is not a SHA-256 hash, nor any identifier when ad user data was denied', () => {
      const raw = body([event({ identity: { emailGoogle: 'john@example.com', phoneE164: '+16505551212' } })]).conversions[0]
      expect(raw).not.toHaveProperty('userIdentifiers')
      expect(JSON.stringify(raw)).not.toContain('john@example.com')
      const denied = body([event({ consent: { adUserData: 'denied', adPersonalization: 'denied' } })]).conversions[0]
      expect(denied).not.toHaveProperty('userIdentifiers')
    })

    it('tells the pipeline which events Google takes; one without a conversion action is never in a request', () => {
      const opts = options({ conversionActions: { Purchase: '111' } })
      expect(skipReason(event(), opts)).toBeUndefined()
      expect(skipReason(event({ standardEvent: 'Lead' }), opts)).toBeDefined()
      expect(skipReason(event({ standardEvent: 'Lead' }), opts)).toBe('no Google Ads conversion action is configured for Lead')
      expect(skipReason(event({ clickIds: { fbc: 'fb.1.1.x' }, identity: {} }), opts)).toBe('no gclid, gbraid or wbraid, and no hashed email or phone Google may use')
      expect(skipReason(event({ clickIds: {} }), opts)).toBeUndefined() // enhanced conversions for leads: hashed email alone
      const plan = planDelivery(googleAds, [event(), event({ messageId: 'msg-2', standardEvent: 'Lead' })], opts)
      expect(plan.refused).toEqual({ 'msg-2': 'no Google Ads conversion action is configured for Lead' })
      expect((JSON.parse(plan.request!.body) as UploadClickConversionsBody).conversions.map((c) => c.orderId)).toEqual(['msg-1'])
    })
  })

  describe('google_ads responses', () => {
    const four = [event({ messageId: 'a' }), event({ messageId: 'b' }), event({ messageId: 'c' }), event({ messageId: 'd' })]

    it('counts every conversion sent when Google reports no partial failure', () => {
      const ok = reply(200, { results: four.map(() => ({ gclid: 'G', conversionAction: `customers/${CUSTOMER}/conversionActions/111`, conversionDateTime: '2026-11-20 09:08:07+00:00' })), jobId: '2147483990' })
      expect(googleAds.parseResponse(ok, four)).toEqual(four.map(() => ({ status: 'sent' })))
      expect(googleAds.parseResponse(reply(200, {}), four.slice(0, 1))).toEqual([{ status: 'sent' }]) // validateOnly: no results
    })

    it('places each partial-failure error on its row: rejected, retry after 6 hours, or already recorded', () => {
      const at = (index: number, field: string) => ({ fieldPathElements: [{ fieldName: 'conversions', index }, { fieldName: field }] })
      const partial = reply(200, {
        partialFailureError: {
          code: 3,
          message: 'The imported gclid could not be decoded., at conversions[1].gclid, ...',
          details: adsFailure([
            { errorCode: { conversionUploadError: 'UNPARSEABLE_GCLID' }, message: 'The imported gclid could not be decoded.', trigger: { stringValue: 'xyz' }, location: at(1, 'gclid') },
            { errorCode: { conversionUploadError: 'TOO_RECENT_EVENT' }, message: 'The click associated with the given identifier or iOS URL parameter occurred less than 6 hours ago. Retry after 6 hours have passed.', location: at(2, 'gclid') },
            { errorCode: { conversionUploadError: 'ORDER_ID_ALREADY_IN_USE' }, message: 'The imported event includes an order ID that was previously recorded, so the event was not processed.', location: at(3, 'order_id') },
          ]),
        },
        results: [{ gclid: 'G', conversionAction: `customers/${CUSTOMER}/conversionActions/111`, conversionDateTime: '2026-11-20 09:08:07+00:00' }, {}, {}, {}],
        jobId: '2147483990',
      })
      expect(googleAds.parseResponse(partial, four)).toEqual([
        { status: 'sent' },
        { status: 'rejected', message: 'conversionUploadError.UNPARSEABLE_GCLID: The imported gclid could not be decoded.' },
        { status: 'retry', message: expect.stringContaining('TOO_RECENT_EVENT'), retryAfterMs: 6 * 3_600_000 },
        { status: 'sent' },
      ])
    })

    it('rejects every event on an authentication or permission failure, in Google\'s words', () => {
      const unauthenticated = reply(401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED', details: [] } })
      expect(googleAds.parseResponse(unauthenticated, four.slice(0, 2))).toEqual([
        { status: 'rejected', message: 'UNAUTHENTICATED: Request had invalid authentication credentials.' },
        { status: 'rejected', message: 'UNAUTHENTICATED: Request had invalid authentication credentials.' },
      ])
      const denied = reply(403, { error: { code: 403, message: 'The caller does not have permission', status: 'PERMISSION_DENIED', details: adsFailure([{ errorCode: { authorizationError: 'USER_PERMISSION_DENIED' }, message: 'User doesn\'t have permission to access customer. Note: If you\'re accessing a client customer, the manager\'s customer ID must be set in the \'login-customer-id\' header.' }]) } })
      const [outcome] = googleAds.parseResponse(denied, four.slice(0, 1))
      expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^PERMISSION_DENIED: .*authorizationError\.USER_PERMISSION_DENIED: .*login-customer-id/) })
    })

    it('rejects an invalid argument, but retries a concurrent modification', () => {
      const invalid = reply(400, { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT', details: adsFailure([{ errorCode: { partialFailureError: 'PARTIAL_FAILURE_MODE_REQUIRED' }, message: 'The partial failure field was false in the request.' }]) } })
      expect(googleAds.parseResponse(invalid, four.slice(0, 1))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('PARTIAL_FAILURE_MODE_REQUIRED') })
      const busy = reply(400, { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT', details: adsFailure([{ errorCode: { databaseError: 'CONCURRENT_MODIFICATION' }, message: 'Multiple requests were attempting to modify the same resource at once. Retry the request.' }]) } })
      expect(googleAds.parseResponse(busy, four.slice(0, 1))[0]).toMatchObject({ status: 'retry' })
    })

    it('retries a 429 after Retry-After, else after Google\'s retryDelay, else with the pipeline\'s backoff', () => {
      const exhausted = (details: unknown[] = []) => ({ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED', details } })
      expect(googleAds.parseResponse(reply(429, exhausted(), { 'retry-after': '30' }), four.slice(0, 1))).toEqual([{ status: 'retry', message: 'RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).', retryAfterMs: 30_000 }])
      const quota = exhausted(adsFailure([{ errorCode: { quotaError: 'RESOURCE_TEMPORARILY_EXHAUSTED' }, message: 'Too many requests in a short amount of time.', details: { quotaErrorDetails: { rateScope: 'DEVELOPER', rateName: 'Requests per developer per minute', retryDelay: '45s' } } }]))
      expect(googleAds.parseResponse(reply(429, quota), four.slice(0, 1))[0]).toMatchObject({ status: 'retry', retryAfterMs: 45_000 })
      const rpcRetry = exhausted([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }])
      expect(googleAds.parseResponse(reply(429, rpcRetry), four.slice(0, 1))[0]).toMatchObject({ retryAfterMs: 1500 })
      expect(googleAds.parseResponse(reply(429, exhausted()), four.slice(0, 1))[0]).not.toHaveProperty('retryAfterMs')
    })

    it('retries server errors except 501, and copes with bodies that are not JSON', () => {
      const internal = reply(500, { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL', details: [] } })
      expect(googleAds.parseResponse(internal, four.slice(0, 1))).toEqual([{ status: 'retry', message: 'INTERNAL: Internal error encountered.' }])
      expect(googleAds.parseResponse(reply(503, '<html><body><h1>Service Unavailable</h1></body></html>'), four.slice(0, 1))).toEqual([{ status: 'retry', message: 'HTTP 503: Service Unavailable' }])
      expect(googleAds.parseResponse(reply(501, { error: { code: 501, message: 'Operation is not implemented, or supported, or enabled.', status: 'UNIMPLEMENTED' } }), four.slice(0, 1))[0]).toMatchObject({ status: 'rejected' })
      expect(googleAds.parseResponse(reply(404, '<!DOCTYPE html><title>Error 404 (Not Found)!!1</title>'), four.slice(0, 1))[0]).toEqual({ status: 'rejected', message: 'HTTP 404: Error 404 (Not Found)!!1' })
      expect(googleAds.parseResponse(reply(200, 'upstream connect error'), four.slice(0, 1))[0]).toMatchObject({ status: 'retry' })
    })
  })

  describe('google_ads against the fake Google', () => {
    let google: FakeGoogleAds
    const opts = (overrides: Record<string, unknown> = {}) => options({ baseUrl: google.url, oauthUrl: google.oauthUrl, ...overrides })
    beforeAll(async () => {
      google = await startFakeGoogleAds()
    })
    afterAll(() => google?.close())

    it('exchanges the refresh token once and reuses the access token until a minute before it expires', async () => {
      const cache = memoryCache()
      const before = google.tokenRequests.length
      const headers = await googleAds.authorize!(opts({ loginCustomerId: '9876543210' }), context(cache))
      expect(headers).toEqual({ 'authorization': expect.stringMatching(/^Bearer ya29\./), 'developer-token': 'dev-token-22-characters', 'login-customer-id': '9876543210' })
      expect(google.tokenRequests.slice(before)).toEqual([{ client_id: google.credentials.clientId, client_secret: google.credentials.clientSecret, refresh_token: google.credentials.refreshToken, grant_type: 'refresh_token' }])
      expect(await googleAds.authorize!(opts(), context(cache))).toMatchObject({ authorization: headers.authorization })
      expect(google.tokenRequests.length).toBe(before + 1)
      const key = tokenCacheKey(opts())
      expect(cache.store.get(key)?.ttl).toBe(3599 - 60)
      expect(key).not.toContain(google.credentials.refreshToken)
      const { developerToken: _, ...noDeveloperToken } = opts()
      expect(await googleAds.authorize!(noDeveloperToken, context(cache))).not.toHaveProperty('developer-token')
    })

    it('throws Google\'s OAuth error, with what to do, when the refresh token is refused', async () => {
      const refused = googleAds.authorize!(opts({ refreshToken: '1//revoked' }), context())
      await expect(refused).rejects.toThrow(GoogleOAuthError)
      await expect(refused).rejects.toThrow(/invalid_grant: Bad Request \(generate a new refresh token/)
      google.queue({ status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } })
      const error = await googleAds.authorize!(opts(), context()).catch((e: unknown) => e)
      expect(error).toMatchObject({ name: 'GoogleOAuthError', status: 400, retryable: false, message: expect.stringContaining('invalid_grant: Token has been expired or revoked.') })
      await expect(googleAds.authorize!(opts({ clientSecret: 'wrong' }), context())).rejects.toThrow(/invalid_client: Unauthorized/)
      google.queue({ status: 503, body: '<html>Service Unavailable</html>', headers: { 'content-type': 'text/html' } })
      expect(await googleAds.authorize!(opts(), context()).catch((e: unknown) => e)).toMatchObject({ retryable: true, message: 'Google OAuth answered HTTP 503 without an access token: <html>Service Unavailable</html>' })
    })

    it('has a full batch accepted and recorded by Google', async () => {
      const events = [
        event({ messageId: 'e1' }),
        event({ messageId: 'e2', standardEvent: 'Lead', orderId: undefined, value: undefined, currency: undefined, clickIds: {} }),
        event({ messageId: 'e3', standardEvent: 'Schedule', orderId: undefined, clickIds: { wbraid: 'WBRAID-1', gbraid: 'GBRAID-1' }, consent: { adUserData: 'unknown', adPersonalization: 'unknown' } }),
      ]
      const before = google.conversions.length
      expect(await deliver(events, opts(), context())).toEqual([{ status: 'sent' }, { status: 'sent' }, { status: 'sent' }])
      const recorded = google.conversions.slice(before)
      expect(recorded.map((r) => r.customerId)).toEqual([CUSTOMER, CUSTOMER, CUSTOMER])
      expect(recorded.map((r) => r.conversion.orderId)).toEqual(['e1', 'e2', 'e3'])
      expect(recorded[2]!.conversion).toMatchObject({ gbraid: 'GBRAID-1', conversionAction: `customers/${CUSTOMER}/conversionActions/444`, consent: { adUserData: 'UNSPECIFIED' } })
      expect(google.uploads.at(-1)).toMatchObject({ version: GOOGLE_ADS_API_VERSION, headers: { 'developer-token': 'dev-token-22-characters', 'content-type': 'application/json' } })
    })

    it('counts a re-sent batch as sent without recording it twice', async () => {
      const events = [event({ messageId: 'r1', orderId: 'order-resend' })]
      const ctx = context()
      expect(await deliver(events, opts(), ctx)).toEqual([{ status: 'sent' }])
      const before = google.conversions.length
      expect(await deliver(events, opts(), ctx)).toEqual([{ status: 'sent' }])
      expect(google.conversions.length).toBe(before)
    })

    it('validates without recording in test mode, and reports Google\'s row errors there too', async () => {
      const before = google.conversions.length
      const outcomes = await deliver([event({ messageId: 'v1', orderId: 'order-v1' }), event({ messageId: 'v2', orderId: 'order-v2', standardEvent: 'Lead' })], opts({ validateOnly: true, conversionActions: { Purchase: '111', Lead: '999' } }), context())
      expect(outcomes).toEqual([{ status: 'sent' }, { status: 'rejected', message: expect.stringMatching(/^conversionUploadError\.NO_CONVERSION_ACTION_FOUND: /) }])
      expect(google.conversions.length).toBe(before)
    })

    it('gets Google\'s per-row verdicts back on the right events', async () => {
      const picky = await startFakeGoogleAds({ rowError: (c) => c.gclid === 'bad' ? { code: { conversionUploadError: 'UNPARSEABLE_GCLID' }, message: 'The imported gclid could not be decoded.' } : undefined })
      try {
        const events = [event({ messageId: 'p1', orderId: 'p1' }), event({ messageId: 'p2', orderId: 'p2', clickIds: { gclid: 'bad' } }), event({ messageId: 'p3', orderId: 'p3' })]
        expect(await deliver(events, options({ baseUrl: picky.url, oauthUrl: picky.oauthUrl }), context())).toEqual([
          { status: 'sent' }, { status: 'rejected', message: 'conversionUploadError.UNPARSEABLE_GCLID: The imported gclid could not be decoded.' }, { status: 'sent' },
        ])
        expect(picky.conversions.map((r) => r.conversion.orderId)).toEqual(['p1', 'p3'])
      }
      finally {
        await picky.close()
      }
    })

    it('rejects the batch with Google\'s reason when the access token is no longer valid or the manager id is missing', async () => {
      const ctx = context()
      await googleAds.authorize!(opts(), ctx)
      google.expireTokens()
      const [outcome] = await deliver([event({ messageId: 'x1', orderId: 'x1' })], opts(), ctx)
      expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^UNAUTHENTICATED: Request had invalid authentication credentials/) })

      const managed = await startFakeGoogleAds({ managerId: '9876543210' })
      try {
        const base = { baseUrl: managed.url, oauthUrl: managed.oauthUrl }
        expect((await deliver([event()], options(base), context()))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('login-customer-id') })
        expect(await deliver([event()], options({ ...base, loginCustomerId: '987-654-3210' }), context())).toEqual([{ status: 'sent' }])
      }
      finally {
        await managed.close()
      }
    })
  })
}

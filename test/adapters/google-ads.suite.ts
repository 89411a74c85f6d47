import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import googleAds, { googleAdsOptions, type GoogleAdsOptions } from '../../adapters/ads/google-ads/index.ts'
import { skipReason, type IngestEventsBody } from '../../adapters/ads/google-ads/map.ts'
import { toConversionDateTime, type UploadClickConversionsBody } from '../../adapters/ads/google-ads/map-upload-clicks.ts'
import { SCOPE_HINT } from '../../adapters/ads/google-ads/response.ts'
import { GoogleOAuthError, tokenCacheKey } from '../../adapters/ads/google-ads/auth.ts'
import { UPLOAD_CLICKS_VERSION } from '../../adapters/ads/google-ads/version.ts'
import type { ConversionEvent, DeliveryOutcome } from '../../core/delivery/types.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { createRegistry, type AuthContext } from '../../core/registry.ts'
import { planDelivery, testAdPlatform } from '../contract/ad-platform.ts'
import { startFakeGoogleAds, SCOPES, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { send } from '../fakes/helpers.ts'
import { adjustmentTests } from './google-ads-adjustments.ts'
import { diagnosticsTests } from './google-ads-diagnostics.ts'
import { oracleTests } from './google-ads-oracle.ts'

const sha = (text: string) => createHash('sha256').update(text).digest('hex')
const CUSTOMER = '1234567890'

const BASE_OPTIONS = {
  customerId: '123-456-7890',
  developerToken: 'dev-token-22-characters',
  clientId: 'fake-client.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-fake-secret',
  refreshToken: '1//fake-refresh-token',
  conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' },
}

/** A fresh configuration: no `api`, so the Data Manager API. */
function options(overrides: Record<string, unknown> = {}): GoogleAdsOptions {
  return v.parse(googleAdsOptions, { ...BASE_OPTIONS, ...overrides })
}

/** The legacy path, for accounts Google still allowlists for click uploads. */
function legacy(overrides: Record<string, unknown> = {}): GoogleAdsOptions {
  return options({ api: 'upload-clicks', ...overrides })
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

/** The legacy request body. */
function body(events: ConversionEvent[], opts = legacy()) {
  return JSON.parse(googleAds.toRequest(events, opts).body)
}

/** The Data Manager request body. */
function ingestBody(events: ConversionEvent[], opts = options()): IngestEventsBody {
  return JSON.parse(googleAds.toRequest(events, opts).body) as IngestEventsBody
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
const adsFailure = (errors: unknown[]) => [{ '@type': `type.googleapis.com/google.ads.googleads.${UPLOAD_CLICKS_VERSION}.errors.GoogleAdsFailure`, errors, requestId: 'gHkT3jq4Ws2rV7vTf2u1Qw' }]

/** Google's error body (google.rpc.Status in REST), as the Data Manager "Understand API errors" page describes it. */
const rpcStatus = (code: number, status: string, message: string, details: unknown[] = []) => ({ error: { code, message, status, details: [...details, { '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: 'b1e7c0de-5d1f-4f00-9a55-0c0ffee00001' }] } })
const badRequest = (...fieldViolations: { field: string, reason: string, description: string }[]) => [
  { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations },
  { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_ARGUMENT', domain: 'datamanager.googleapis.com' },
]

const CONTRACT_OPTIONS = {
  customerId: CUSTOMER,
  clientId: 'fake-client.apps.googleusercontent.com',
  clientSecret: 'GOCSPX-fake-secret',
  refreshToken: '1//fake-refresh-token',
  conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' },
  validateOnly: false,
  baseUrl: 'http://127.0.0.1:9/google-ads',
  oauthUrl: 'http://127.0.0.1:9/token',
} as const
const ingested = (request: unknown) => (request as IngestEventsBody).events

testAdPlatform<GoogleAdsOptions>({
  adapter: googleAds,
  folder: 'google-ads',
  options: v.parse(googleAdsOptions, CONTRACT_OPTIONS),
  invalidOptions: [
    { ...CONTRACT_OPTIONS, customerId: '123-456-789' },
    { ...CONTRACT_OPTIONS, conversionActions: {} },
    { ...CONTRACT_OPTIONS, conversionActions: { purchase: '111' } },
    { ...CONTRACT_OPTIONS, conversionActions: { Purchase: 'AW-123456789/AbC-D_efG' } }, // a gtag send_to label, not an action id
    { ...CONTRACT_OPTIONS, baseUrl: 'googleads.googleapis.com' },
    { ...CONTRACT_OPTIONS, refreshToken: '' },
    { ...CONTRACT_OPTIONS, api: 'rest' },
  ],
  replies: {
    success: () => ({ status: 200, body: { requestId: 'b1e7c0de-5d1f-4f00-9a55-0c0ffee00002' } }),
    // Fast-fail: Google processed nothing; the violation names events[1], which is refused, and the others go again.
    partial: (events) => ({
      reply: { status: 400, body: rpcStatus(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', badRequest({ field: 'events[1].currency', reason: 'INVALID_CURRENCY_CODE', description: 'The currency code is not supported.' })) },
      statuses: events.map((_, index) => index === 1 ? 'rejected' : 'retry'),
    }),
    auth: { status: 401, body: rpcStatus(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'), platformMessage: 'Request had invalid authentication credentials.' },
    rateLimit: {
      status: 429,
      body: rpcStatus(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for quota metric \'Ingestion requests\' and limit \'Ingestion requests per minute\' of service \'datamanager.googleapis.com\'.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', domain: 'googleapis.com' }]),
      platformMessage: 'Quota exceeded for quota metric',
    },
    serverError: { status: 503, body: rpcStatus(503, 'UNAVAILABLE', 'The service is currently unavailable.'), platformMessage: 'The service is currently unavailable.' },
  },
  countEvents: (request) => ingested(request).length,
  dedupKeyIn: (request, event) => ingested(request).some((e) => e.transactionId === event.messageId),
  // AddressInfo's postal code is taken in clear (README "Address").
  piiFields: { sentPlain: ['zip'] },
  additionalTests: () => {
    dataManagerTests()
    legacyTests()
    adjustmentTests()
    oracleTests()
    diagnosticsTests()
  },
})

/** The Data Manager API, the default path. */
function dataManagerTests(): void {
  describe('google_ads options', () => {
    it('sends a configuration without `api` to the Data Manager API at datamanager.googleapis.com', () => {
      expect(options()).toMatchObject({ api: 'data-manager', baseUrl: 'https://datamanager.googleapis.com', oauthUrl: 'https://oauth2.googleapis.com/token' })
      expect(legacy()).toMatchObject({ api: 'upload-clicks', baseUrl: 'https://googleads.googleapis.com' })
      expect(options({ baseUrl: 'https://proxy.example.test/google/' }).baseUrl).toBe('https://proxy.example.test/google')
    })

    it('refuses an unknown api, naming the two it takes', () => {
      const result = v.safeParse(googleAdsOptions, { ...BASE_OPTIONS, api: 'rest' })
      expect(result.issues?.map((i) => `${i.path?.map((p) => p.key).join('.')}: ${i.message}`)).toEqual(['api: must be "data-manager" or "upload-clicks"'])
    })
  })

  describe('google_ads mapping (Data Manager API)', () => {
    it('posts every event to events:ingest with the account as operating account and the action as destination', () => {
      const request = googleAds.toRequest([event(), event({ messageId: 'msg-2' })], options())
      expect(request).toMatchObject({ method: 'POST', url: 'https://datamanager.googleapis.com/v1/events:ingest', headers: { 'content-type': 'application/json' } })
      const sent = JSON.parse(request.body) as IngestEventsBody
      expect(sent.destinations).toEqual([{ reference: '111', operatingAccount: { accountType: 'GOOGLE_ADS', accountId: CUSTOMER }, productDestinationId: '111' }])
      expect(sent).toMatchObject({ encoding: 'HEX' })
      expect(sent).not.toHaveProperty('validateOnly')
      expect(sent.events.map((e) => e.destinationReferences)).toEqual([['111'], ['111']])
      expect(ingestBody([event()], options({ validateOnly: true })).validateOnly).toBe(true)
    })

    it('names the manager account as loginAccount, and sends no developer token', async () => {
      expect(ingestBody([event()], options({ loginCustomerId: '987-654-3210' })).destinations[0]).toMatchObject({ loginAccount: { accountType: 'GOOGLE_ADS', accountId: '9876543210' } })
      expect(googleAds.toRequest([event()], options()).headers).not.toHaveProperty('developer-token')
    })

    it('gives each conversion action of a mixed batch its own destination, and each event points at its own', () => {
      const sent = ingestBody([event(), event({ messageId: 'l1', standardEvent: 'Lead' }), event({ messageId: 'p2' }), event({ messageId: 's1', standardEvent: 'Schedule' })])
      expect(sent.destinations.map((d) => [d.reference, d.productDestinationId])).toEqual([['111', '111'], ['222', '222'], ['444', '444']])
      expect(sent.events.map((e) => e.destinationReferences[0])).toEqual(['111', '222', '111', '444'])
    })

    it('maps one event: transaction id, RFC 3339 time, value, currency, click id, landing device, hashed email and phone, source and consent', () => {
      expect(ingestBody([event()]).events[0]).toEqual({
        destinationReferences: ['111'],
        transactionId: 'msg-1',
        eventTimestamp: '2026-11-20T09:08:07.654Z',
        adIdentifiers: { gclid: 'Cj0KCQiA-fake-gclid', landingPageDeviceInfo: { userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.7' } },
        userData: { userIdentifiers: [{ emailAddress: sha('johnsmith@gmail.com') }, { phoneNumber: sha('+16505551212') }] },
        conversionValue: 49.9,
        currency: 'EUR',
        eventSource: 'WEB',
        consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' },
      })
    })

    it('deduplicates on the message id, never the order id, as every adapter does', () => {
      expect(ingestBody([event({ orderId: 'order-77' }), event({ messageId: 'public:m2', orderId: undefined })]).events.map((e) => e.transactionId)).toEqual(['msg-1', 'public:m2'])
    })

    it('sends one click id: gclid, else gbraid, else wbraid', () => {
      const ids = (clickIds: ConversionEvent['clickIds']) => {
        const { landingPageDeviceInfo: _, ...rest } = ingestBody([event({ clickIds })]).events[0]!.adIdentifiers ?? {}
        return rest
      }
      expect(ids({ gclid: 'G', gbraid: 'B', wbraid: 'W', fbc: 'fb.1.1.x' })).toEqual({ gclid: 'G' })
      expect(ids({ gbraid: 'B', wbraid: 'W' })).toEqual({ gbraid: 'B' })
      expect(ids({ wbraid: 'W' })).toEqual({ wbraid: 'W' })
      expect(ids({})).toEqual({})
    })

    it('maps the channel to Google\'s event source: WEB for online and pick-up-in-store, IN_STORE, PHONE', () => {
      const source = (channel: ConversionEvent['channel']) => ingestBody([event({ channel })]).events[0]!.eventSource
      expect([source('online'), source('bopis'), source('in_store'), source('phone')]).toEqual(['WEB', 'WEB', 'IN_STORE', 'PHONE'])
    })

    it('maps consent granted, denied and unknown to Google\'s ConsentStatus, for ad user data and ad personalization', () => {
      const consent = (adUserData: 'granted' | 'denied' | 'unknown', adPersonalization: 'granted' | 'denied' | 'unknown') => ingestBody([event({ consent: { adUserData, adPersonalization } })]).events[0]!.consent
      expect(consent('granted', 'denied')).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_DENIED' })
      expect(consent('unknown', 'unknown')).toEqual({ adUserData: 'CONSENT_STATUS_UNSPECIFIED', adPersonalization: 'CONSENT_STATUS_UNSPECIFIED' })
    })

    it('sends no email, phone, IP or user agent when the person denied ad user data; the click id still goes', () => {
      const sent = ingestBody([event({ consent: { adUserData: 'denied', adPersonalization: 'denied' } })]).events[0]!
      expect(sent).not.toHaveProperty('userData')
      expect(sent.adIdentifiers).toEqual({ gclid: 'Cj0KCQiA-fake-gclid' })
      expect(sent.consent).toEqual({ adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_DENIED' })
    })

    it('leaves out the IP of a person known to be in the EEA, the UK or Switzerland (Google does not match it there)', () => {
      const device = (country?: string) => ingestBody([event({ identity: { ...event().identity, ...(country ? { country: sha(country) } : {}) } })]).events[0]!.adIdentifiers?.landingPageDeviceInfo
      expect(device('de')).toEqual({ userAgent: 'Mozilla/5.0' })
      expect(device('gb')).toEqual({ userAgent: 'Mozilla/5.0' })
      expect(device('ch')).toEqual({ userAgent: 'Mozilla/5.0' })
      expect(device('us')).toEqual({ userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.7' })
      expect(device()).toEqual({ userAgent: 'Mozilla/5.0', ipAddress: '203.0.113.7' })
    })

    it('sends no landing device for a sale in a store or by phone, and nothing it has not got', () => {
      expect(ingestBody([event({ channel: 'in_store' })]).events[0]!.adIdentifiers).toEqual({ gclid: 'Cj0KCQiA-fake-gclid' })
      const bare = ingestBody([event({ ip: undefined, userAgent: undefined, value: undefined, currency: undefined, clickIds: {} })]).events[0]!
      expect(bare).not.toHaveProperty('adIdentifiers')
      expect(bare).not.toHaveProperty('conversionValue')
      expect(bare).not.toHaveProperty('currency')
    })

    it('sends a US opt-out (limitedDataUse) as ad personalization denied, the only consent signal the Data Manager API has for it', () => {
      const limited = ingestBody([event({ limitedDataUse: { country: 'us', state: 'ca' } })]).events[0]!
      const plain = ingestBody([event()]).events[0]!
      expect(limited.consent).toEqual({ adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_DENIED' })
      expect({ ...limited, consent: undefined }).toEqual({ ...plain, consent: undefined })
    })

    it('skips, saying why, an event without a conversion action or anything Google may match on', () => {
      const opts = options({ conversionActions: { Purchase: '111' } })
      expect(skipReason(event({ standardEvent: 'Lead' }), opts)).toBe('no Google Ads conversion action is configured for Lead')
      expect(skipReason(event({ clickIds: {}, consent: { adUserData: 'denied', adPersonalization: 'granted' } }), opts)).toBe('no gclid, gbraid or wbraid, and no hashed email or phone Google may use')
      const plan = planDelivery(googleAds, [event(), event({ messageId: 'msg-2', standardEvent: 'Lead' })], opts)
      expect(plan.refused).toEqual({ 'msg-2': 'no Google Ads conversion action is configured for Lead' })
      expect(ingested(JSON.parse(plan.request!.body)).map((e) => e.transactionId)).toEqual(['msg-1'])
    })

    it('declares Google\'s documented limits: 2,000 events a request, 300 requests a minute (5 a second)', () => {
      expect(googleAds.maxBatchSize).toBe(2000)
      expect(googleAds.maxRequestsPerSecond).toBe(5)
    })
  })

  describe('google_ads responses (Data Manager API)', () => {
    const five = ['a', 'b', 'c', 'd', 'e'].map((messageId) => event({ messageId }))
    const invalid = (...violations: Parameters<typeof badRequest>) => reply(400, rpcStatus(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', badRequest(...violations)))

    it('counts every event sent when Google answers a request id', () => {
      expect(googleAds.parseResponse(reply(200, { requestId: 'r-1' }), five)).toEqual(five.map(() => ({ status: 'sent' })))
      expect(googleAds.parseResponse(reply(200, 'upstream connect error'), five.slice(0, 1))[0]).toMatchObject({ status: 'retry' })
    })

    it('rejects the events the field violations name, in Google\'s words, and sends the others again', () => {
      const outcomes = googleAds.parseResponse(invalid(
        { field: 'events[1].userData.userIdentifiers[0].emailAddress', reason: 'INVALID_SHA256_FORMAT', description: 'The SHA256 encoded value is malformed.' },
        { field: 'events[3].currency', reason: 'INVALID_CURRENCY_CODE', description: 'The currency code is not supported.' },
        { field: 'events[3].eventTimestamp', reason: 'INVALID_FORMAT', description: 'Format is invalid.' },
      ), five)
      expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry', 'rejected', 'retry'])
      expect(outcomes[1]).toEqual({ status: 'rejected', message: 'INVALID_SHA256_FORMAT at events[1].userData.userIdentifiers[0].emailAddress: The SHA256 encoded value is malformed.' })
      expect(outcomes[3]).toEqual({ status: 'rejected', message: 'INVALID_CURRENCY_CODE at events[3].currency: The currency code is not supported.; INVALID_FORMAT at events[3].eventTimestamp: Format is invalid.' })
      expect(outcomes[0]).toEqual({ status: 'retry', message: 'not processed: Google refused the whole request for other events (events[1], events[3]: INVALID_ARGUMENT); sent again without them' })
    })

    it('rejects the whole batch when a violation names the request, not an event, or an event it does not hold', () => {
      const destination = googleAds.parseResponse(invalid({ field: 'destinations[0].productDestinationId', reason: 'INVALID_CONVERSION_ACTION_ID', description: 'The conversion action ID is not valid.' }), five.slice(0, 2))
      expect(destination).toEqual(destination.map(() => ({ status: 'rejected', message: 'INVALID_ARGUMENT: Request contains an invalid argument.; reason INVALID_ARGUMENT; INVALID_CONVERSION_ACTION_ID at destinations[0].productDestinationId: The conversion action ID is not valid.; request id b1e7c0de-5d1f-4f00-9a55-0c0ffee00001' })))
      const mixed = googleAds.parseResponse(invalid({ field: 'events[0].currency', reason: 'INVALID_CURRENCY_CODE', description: 'x' }, { field: 'encoding', reason: 'REQUIRED_FIELD_MISSING', description: 'y' }), five.slice(0, 2))
      expect(mixed.map((o) => o.status)).toEqual(['rejected', 'rejected'])
      const beyond = googleAds.parseResponse(invalid({ field: 'events[7].currency', reason: 'INVALID_CURRENCY_CODE', description: 'x' }), five.slice(0, 2))
      expect(beyond.map((o) => o.status)).toEqual(['rejected', 'rejected'])
      expect(googleAds.parseResponse(reply(400, rpcStatus(400, 'FAILED_PRECONDITION', 'Precondition check failed.')), five.slice(0, 1))[0]).toMatchObject({ status: 'rejected' })
    })

    it('says what to do when the refresh token lacks the Data Manager scope, or the API is not enabled', () => {
      const scope = reply(403, rpcStatus(403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', domain: 'googleapis.com', metadata: { service: 'datamanager.googleapis.com', method: 'google.ads.datamanager.v1.IngestionService.IngestEvents' } }]))
      const [outcome] = googleAds.parseResponse(scope, five.slice(0, 1))
      expect(outcome).toEqual({ status: 'rejected', message: expect.stringContaining(`PERMISSION_DENIED: Request had insufficient authentication scopes.; reason ACCESS_TOKEN_SCOPE_INSUFFICIENT`) })
      expect((outcome as { message: string }).message).toContain(SCOPE_HINT)
      expect(SCOPE_HINT).toContain('https://www.googleapis.com/auth/datamanager')
      const disabled = reply(403, rpcStatus(403, 'PERMISSION_DENIED', 'Data Manager API has not been used in project 123 before or it is disabled.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'SERVICE_DISABLED', domain: 'googleapis.com' }]))
      expect(googleAds.parseResponse(disabled, five.slice(0, 1))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('enable the API named above') })
      const denied = reply(403, rpcStatus(403, 'PERMISSION_DENIED', 'The caller does not have permission', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'PERMISSION_DENIED', domain: 'datamanager.googleapis.com' }]))
      expect(googleAds.parseResponse(denied, five.slice(0, 1))[0]).toEqual({ status: 'rejected', message: 'PERMISSION_DENIED: The caller does not have permission; reason PERMISSION_DENIED; request id b1e7c0de-5d1f-4f00-9a55-0c0ffee00001' })
    })

    it('retries quota, unavailability, internal errors, deadlines and conflicts, after Retry-After or Google\'s RetryInfo', () => {
      const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12.5s' }
      expect(googleAds.parseResponse(reply(429, rpcStatus(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', [retryInfo])), five.slice(0, 1))[0]).toMatchObject({ status: 'retry', retryAfterMs: 12_500 })
      expect(googleAds.parseResponse(reply(429, rpcStatus(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', [retryInfo]), { 'retry-after': '3' }), five.slice(0, 1))[0]).toMatchObject({ retryAfterMs: 3000 })
      for (const [code, status] of [[503, 'UNAVAILABLE'], [500, 'INTERNAL'], [504, 'DEADLINE_EXCEEDED'], [409, 'ABORTED']] as const) {
        expect(googleAds.parseResponse(reply(code, rpcStatus(code, status, 'Try again.')), five.slice(0, 1))[0], status).toMatchObject({ status: 'retry', message: expect.stringMatching(new RegExp(`^${status}: Try again\\.`)) })
      }
      expect(googleAds.parseResponse(reply(501, rpcStatus(501, 'UNIMPLEMENTED', 'Method not found.')), five.slice(0, 1))[0]).toMatchObject({ status: 'rejected' })
    })
  })

  describe('google_ads against the fake Data Manager API', () => {
    let google: FakeGoogleAds
    const opts = (overrides: Record<string, unknown> = {}) => options({ baseUrl: google.url, oauthUrl: google.oauthUrl, ...overrides })
    beforeAll(async () => {
      google = await startFakeGoogleAds()
    })
    afterAll(() => google?.close())

    it('delivers a fresh configuration\'s batch through events:ingest, with only the bearer token, and Google records it', async () => {
      const ctx = context()
      expect(await googleAds.authorize!(opts({ loginCustomerId: undefined }), ctx)).toEqual({ authorization: expect.stringMatching(/^Bearer ya29\./) })
      const events = [
        event({ messageId: 'd1' }),
        event({ messageId: 'd2', standardEvent: 'Lead', value: undefined, currency: undefined, clickIds: {} }),
        event({ messageId: 'd3', standardEvent: 'Schedule', clickIds: { wbraid: 'WBRAID-1' }, consent: { adUserData: 'unknown', adPersonalization: 'unknown' } }),
      ]
      const before = google.conversions.length
      expect(await deliver(events, opts(), ctx)).toEqual([{ status: 'sent' }, { status: 'sent' }, { status: 'sent' }])
      const recorded = google.conversions.slice(before)
      expect(recorded.map((r) => [r.api, r.customerId, r.conversion.orderId, r.conversion.conversionAction])).toEqual([
        ['data-manager', CUSTOMER, 'd1', `customers/${CUSTOMER}/conversionActions/111`],
        ['data-manager', CUSTOMER, 'd2', `customers/${CUSTOMER}/conversionActions/222`],
        ['data-manager', CUSTOMER, 'd3', `customers/${CUSTOMER}/conversionActions/444`],
      ])
      expect(recorded[2]!.conversion).toMatchObject({ wbraid: 'WBRAID-1' })
      const call = google.ingests.at(-1)!
      expect(call.status).toBe(200)
      expect(call.headers).not.toHaveProperty('developer-token')
      expect(call.headers).not.toHaveProperty('login-customer-id')
      expect(google.uploads).toHaveLength(0)
    })

    it('counts a re-sent batch as sent without Google recording it twice', async () => {
      const events = [event({ messageId: 'again-1' })]
      const ctx = context()
      expect(await deliver(events, opts(), ctx)).toEqual([{ status: 'sent' }])
      const before = google.conversions.length
      expect(await deliver(events, opts(), ctx)).toEqual([{ status: 'sent' }])
      expect(google.conversions.length).toBe(before)
    })

    it('takes a full batch of 2,000 events in one request', async () => {
      const events = Array.from({ length: 2000 }, (_, i) => event({ messageId: `full-${i}`, clickIds: { gclid: `G-${i}` } }))
      const before = google.ingests.length
      expect((await deliver(events, opts(), context())).every((o) => o.status === 'sent')).toBe(true)
      expect(google.ingests.length).toBe(before + 1)
    })

    it('validates without recording in test mode, and reports a bad event there too', async () => {
      const before = google.conversions.length
      expect(await deliver([event({ messageId: 'v1' })], opts({ validateOnly: true }), context())).toEqual([{ status: 'sent' }])
      const outcomes = await deliver([event({ messageId: 'v2' }), event({ messageId: 'v3', currency: 'euro' })], opts({ validateOnly: true }), context())
      expect(outcomes).toEqual([{ status: 'retry', message: expect.stringContaining('events[1]') }, { status: 'rejected', message: 'INVALID_CURRENCY_CODE at events[1].currency: The currency code is not supported.' }])
      expect(google.conversions.length).toBe(before)
    })

    it('loses no batch to one bad event: it is rejected, the others are sent on the next try', async () => {
      const picky = await startFakeGoogleAds({ eventViolation: (e) => e.adIdentifiers?.gclid === 'bad' ? { field: 'adIdentifiers.gclid', reason: 'INVALID_FORMAT', description: 'Format is invalid.' } : undefined })
      try {
        const o = options({ baseUrl: picky.url, oauthUrl: picky.oauthUrl })
        const ctx = context()
        const events = [event({ messageId: 'p1' }), event({ messageId: 'p2', clickIds: { gclid: 'bad' } }), event({ messageId: 'p3' })]
        const first = await deliver(events, o, ctx)
        expect(first).toEqual([
          { status: 'retry', message: expect.stringContaining('events[1]') },
          { status: 'rejected', message: 'INVALID_FORMAT at events[1].adIdentifiers.gclid: Format is invalid.' },
          { status: 'retry', message: expect.stringContaining('events[1]') },
        ])
        expect(picky.conversions).toHaveLength(0)
        const again = events.filter((_, i) => first[i]!.status === 'retry')
        expect(await deliver(again, o, ctx)).toEqual([{ status: 'sent' }, { status: 'sent' }])
        expect(picky.conversions.map((r) => r.conversion.orderId)).toEqual(['p1', 'p3'])
      }
      finally {
        await picky.close()
      }
    })

    it('refuses a refresh token made for the Google Ads API only, saying which scope to add', async () => {
      const adwordsOnly = await startFakeGoogleAds({ scopes: [SCOPES.adwords] })
      try {
        const [outcome] = await deliver([event()], options({ baseUrl: adwordsOnly.url, oauthUrl: adwordsOnly.oauthUrl }), context())
        expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringContaining('insufficient authentication scopes') })
        expect((outcome as { message: string }).message).toContain('https://www.googleapis.com/auth/datamanager')
        // The same token still works on the legacy path.
        expect(await deliver([event()], legacy({ baseUrl: adwordsOnly.url, oauthUrl: adwordsOnly.oauthUrl }), context())).toEqual([{ status: 'sent' }])
      }
      finally {
        await adwordsOnly.close()
      }
    })

    it('refuses an unknown conversion action, and an account reached through a manager without loginAccount', async () => {
      expect((await deliver([event()], opts({ conversionActions: { Purchase: '999' } }), context()))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('INVALID_CONVERSION_ACTION_ID at destinations[0].productDestinationId') })
      const managed = await startFakeGoogleAds({ managerId: '9876543210' })
      try {
        const base = { baseUrl: managed.url, oauthUrl: managed.oauthUrl }
        expect((await deliver([event()], options(base), context()))[0]).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^PERMISSION_DENIED: The caller does not have permission/) })
        expect(await deliver([event()], options({ ...base, loginCustomerId: '987-654-3210' }), context())).toEqual([{ status: 'sent' }])
      }
      finally {
        await managed.close()
      }
    })

    it('rejects the batch with Google\'s words when the access token is no longer valid', async () => {
      const ctx = context()
      await googleAds.authorize!(opts(), ctx)
      google.expireTokens()
      const [outcome] = await deliver([event({ messageId: 'x1' })], opts(), ctx)
      expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^UNAUTHENTICATED: Request had invalid authentication credentials/) })
    })

    it('answers requestStatus:retrieve for a request it took (the fake speaks the diagnostics call too)', async () => {
      const headers = await googleAds.authorize!(opts(), context())
      const response = await send(googleAds.toRequest([event({ messageId: 'st-1' })], opts()), headers)
      const { requestId } = JSON.parse(response.body) as { requestId: string }
      const status = await fetch(`${google.url}/v1/requestStatus:retrieve?requestId=${requestId}`, { headers })
      expect(await status.json()).toEqual({ requestStatusPerDestination: [expect.objectContaining({ requestStatus: 'SUCCESS', eventsIngestionStatus: { recordCount: '1' } })] })
      const unknown = await fetch(`${google.url}/v1/requestStatus:retrieve?requestId=nope`, { headers })
      expect(unknown.status).toBe(400)
    })
  })
}

/** The legacy path (`api: 'upload-clicks'`): click uploads keep their behaviour for accounts Google still allowlists. */
function legacyTests(): void {
  describe('google_ads options (legacy path)', () => {
    it('keeps the digits of ids given with dashes or as numbers, and fills in Google\'s URLs', () => {
      const parsed = legacy({ customerId: 1234567890, loginCustomerId: '987-654-3210', conversionActions: { Lead: 6543210987 } })
      expect(parsed).toMatchObject({ customerId: CUSTOMER, loginCustomerId: '9876543210', conversionActions: { Lead: '6543210987' }, validateOnly: false, baseUrl: 'https://googleads.googleapis.com', oauthUrl: 'https://oauth2.googleapis.com/token' })
    })

    it('refuses a short customer id, a misspelt standard event and an empty action map, naming each', () => {
      const result = v.safeParse(googleAdsOptions, { ...legacy(), customerId: '123-456-789', conversionActions: { purchase: '1' } })
      expect(result.success).toBe(false)
      const messages = result.issues!.map((i) => `${i.path?.map((p) => p.key).join('.')}: ${i.message}`)
      expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/^customerId: must be the Google Ads customer id .*10 digits/), expect.stringMatching(/^conversionActions\.purchase: unknown key/)]))
      const empty = v.safeParse(googleAdsOptions, { ...legacy(), conversionActions: {} })
      expect(empty.issues?.[0]?.message).toBe('must give at least one conversion action id')
    })

    it('refuses a misspelt option (they were dropped silently once), so boot stops naming its path', () => {
      const site = { id: 'demo', name: 'Demo', destinations: { google_ads: { ...legacy(), validateonly: true } } }
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
      const { developerToken: _, ...rest } = legacy()
      expect(v.safeParse(googleAdsOptions, rest).success).toBe(true)
    })
  })

  describe('google_ads mapping (legacy path)', () => {
    it('posts all events to the pinned version\'s uploadClickConversions, with partial failure on', () => {
      const request = googleAds.toRequest([event(), event({ messageId: 'msg-2', orderId: 'order-2' })], legacy())
      expect(request).toMatchObject({ method: 'POST', url: `https://googleads.googleapis.com/${UPLOAD_CLICKS_VERSION}/customers/${CUSTOMER}:uploadClickConversions`, headers: { 'content-type': 'application/json' } })
      const sent = JSON.parse(request.body)
      expect(sent.partialFailure).toBe(true)
      expect(sent).not.toHaveProperty('validateOnly')
      expect(sent.conversions).toHaveLength(2)
      expect(body([event()], legacy({ validateOnly: true })).validateOnly).toBe(true)
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
      const opts = legacy({ conversionActions: { Purchase: '111' } })
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

  describe('google_ads responses (legacy path)', () => {
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

  describe('google_ads legacy path against the fake Google Ads API', () => {
    let google: FakeGoogleAds
    const opts = (overrides: Record<string, unknown> = {}) => legacy({ baseUrl: google.url, oauthUrl: google.oauthUrl, ...overrides })
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
      expect(google.uploads.at(-1)).toMatchObject({ version: UPLOAD_CLICKS_VERSION, headers: { 'developer-token': 'dev-token-22-characters', 'content-type': 'application/json' } })
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
        expect(await deliver(events, legacy({ baseUrl: picky.url, oauthUrl: picky.oauthUrl }), context())).toEqual([
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
        expect((await deliver([event()], legacy(base), context()))[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('login-customer-id') })
        expect(await deliver([event()], legacy({ ...base, loginCustomerId: '987-654-3210' }), context())).toEqual([{ status: 'sent' }])
      }
      finally {
        await managed.close()
      }
    })
  })
}

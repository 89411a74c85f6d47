import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import reddit from '../../adapters/ads/reddit/index.ts'
import type { RedditOptions } from '../../adapters/ads/reddit/map.ts'
import { REDDIT_API_VERSION } from '../../adapters/ads/reddit/version.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { hashIdentity, sha256Hex } from '../../core/identity/hash.ts'
import { planDelivery, testAdPlatform, toResponse } from '../contract/ad-platform.ts'
import { HASHED_PERSON, USER_AGENT, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { redditErrors, startFakeReddit } from '../fakes/reddit.ts'

const fake = await startFakeReddit()
afterAll(() => fake.close())

const options: RedditOptions = { pixelId: fake.pixelId, accessToken: fake.accessToken, baseUrl: fake.url }
const resolve = (extra: Record<string, unknown> = {}) => v.parse(reddit.options, { ...options, ...extra })
const resolved = resolve()

interface RedditEvent { event_at: number, action_source: string, type: Record<string, string>, metadata: Record<string, any>, user: Record<string, any>, [key: string]: unknown }
const eventsOf = (body: unknown) => (body as { data: { events: RedditEvent[] } }).data.events
const mapped = (events: ConversionEvent[], opts: RedditOptions = resolved) => JSON.parse(reddit.toRequest(events, opts).body) as { data: { events: RedditEvent[], test_id?: string } }
const one = (event: ConversionEvent, opts?: RedditOptions) => mapped([event], opts).data.events[0]!
const withRdtCid = (event: ConversionEvent): ConversionEvent => ({ ...event, clickIds: { ...event.clickIds, rdt_cid: 'a7d0bd6c-2cf2-4c1e-9d3b-5f0e1a2b3c4d' } })

testAdPlatform<RedditOptions>({
  adapter: reddit,
  folder: 'reddit',
  options,
  invalidOptions: [
    { accessToken: 'token' },
    { pixelId: 'a2_abc' },
    { pixelId: 'a2 abc/../x', accessToken: 'token' },
    { pixelId: 123456, accessToken: 'token' },
    { pixelId: 'a2_abc', accessToken: '   ' },
    { pixelId: 'a2_abc', accessToken: 'token', baseUrl: 'ads-api.reddit.com' },
    { pixelId: 'a2_abc', accessToken: 'token', baseUrl: 'ftp://ads-api.example.test' },
    { pixelId: 'a2_abc', accessToken: 'token', testid: 't2_test' },
    { pixelId: 'a2_abc', accessToken: 'token', events: { Signup: 'SIGN_UP' } },
    { pixelId: 'a2_abc', accessToken: 'token', events: { CompleteRegistration: 'SignUp' } },
    { pixelId: 'a2_abc', accessToken: 'token', events: { Schedule: 'CUSTOM' } },
    { pixelId: 'a2_abc', accessToken: 'token', events: { Schedule: { custom: 'x'.repeat(65) } } },
    { pixelId: 'a2_abc', accessToken: 'token', events: { Lead: true } },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { data: { message: `Successfully processed ${events.length} conversion events.` } } }),
    partial: () => ({
      reply: redditErrors.invalidEvents([{ field: '$.data.events[1].event_at', message: 'event_at timestamp must be less than 168h0m0s old' }]),
      statuses: ['retry', 'rejected', 'retry'],
    }),
    auth: { ...redditErrors.invalidToken(), platformMessage: 'This server could not verify that you are authorized to access the document you requested.' },
    rateLimit: { ...redditErrors.rateLimited(), platformMessage: 'Too many requests/events within timeframe.' },
    serverError: { ...redditErrors.unavailable(), platformMessage: 'The service is currently unavailable. No conversion events were processed.' },
  },
  countEvents: (body) => eventsOf(body).length,
  // Reddit deduplicates on conversion_id within one event type (and custom event name), for events sent within 2 days.
  dedupKeyIn: (body, event) => eventsOf(body).some((e) => e.metadata.conversion_id === event.messageId),
  additionalTests: () => {
    describe('reddit: what reaches the Conversions API', () => {
      it('the fake accepts the whole mapped request, records it, and the answer parses as sent', async () => {
        const events = fixtureEvents(new Date()).map(withRdtCid)
        const response = await send(reddit.toRequest(events, resolved))
        expect([response.status, JSON.parse(response.body)]).toEqual([200, { data: { message: 'Successfully processed 3 conversion events.' } }])
        expect(fake.events.slice(-3).map((e) => e.metadata.conversion_id)).toEqual(events.map((e) => e.messageId))
        expect(reddit.parseResponse(response, events)).toEqual(events.map(() => ({ status: 'sent' })))
      })

      it('posts to /api/v3/pixels/{pixelId}/conversion_events with the token as Bearer and its own user agent', () => {
        const request = reddit.toRequest([purchaseFixture()], resolved)
        expect(request.url).toBe(`${fake.url}/api/${REDDIT_API_VERSION}/pixels/${fake.pixelId}/conversion_events`)
        expect(request.headers).toMatchObject({ 'Authorization': `Bearer ${fake.accessToken}`, 'Content-Type': 'application/json' })
        expect(request.headers['User-Agent']).toMatch(/^dcgate/)
        expect(request.url).not.toContain(fake.accessToken)
      })

      it('a wrong token, no token or another pixel are refused and rejected with what to fix', async () => {
        const events = [leadFixture(new Date())]
        const wrongToken = await send(reddit.toRequest(events, { ...resolved, accessToken: 'revoked' }))
        expect(wrongToken.status).toBe(401)
        expect(reddit.parseResponse(wrongToken, events)[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('generate a new one in Events Manager') })
        const { Authorization: _auth, ...noAuth } = reddit.toRequest(events, resolved).headers
        const noToken = await send({ ...reddit.toRequest(events, resolved), headers: noAuth })
        expect([noToken.status, JSON.parse(noToken.body)]).toEqual([401, { error: { code: 401, message: 'No bearer token provided' } }])
        const otherPixel = await send(reddit.toRequest(events, { ...resolved, pixelId: 'a2_someoneelse' }))
        expect(otherPixel.status).toBe(403)
        expect(reddit.parseResponse(otherPixel, events)[0]).toMatchObject({ status: 'rejected', message: expect.stringMatching(/not authorized to post conversions to Pixel ID a2_someoneelse.*check pixelId/) })
      })

      it('the fake takes a full batch of 1000 and refuses 1001 with "Bad Request", which is rejected', async () => {
        expect((await send(reddit.toRequest(batchOf(1000, new Date()), resolved))).status).toBe(200)
        const events = batchOf(1001, new Date())
        const tooMany = await send(reddit.toRequest(events, resolved))
        expect([tooMany.status, JSON.parse(tooMany.body)]).toEqual([400, { error: { code: 400, message: 'Bad Request' } }])
        expect(reddit.parseResponse(tooMany, events).every((o) => o.status === 'rejected')).toBe(true)
      })

      it('sends event_at in unix milliseconds, conversion_id = messageId, and the default event types', () => {
        const event = purchaseFixture()
        expect(one(event)).toMatchObject({ event_at: event.occurredAt.getTime(), metadata: { conversion_id: 'msg-purchase-0001' }, type: { tracking_type: 'PURCHASE' } })
        expect(one(leadFixture()).type).toEqual({ tracking_type: 'LEAD' })
        expect(one(registrationFixture()).type).toEqual({ tracking_type: 'SIGN_UP' })
        expect(one({ ...leadFixture(), standardEvent: 'Schedule' }).type).toEqual({ tracking_type: 'CUSTOM', custom_event_name: 'Schedule' })
      })

      it('hashes email by Reddit\'s rule (core\'s emailReddit), phone E.164 with +, external id and IP; user agent and rdt_cid raw', () => {
        const alice = hashIdentity({ email: 'Al.ice$+Apple@Example.Com' })
        expect(alice.emailReddit).toBe('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976')
        expect(one({ ...leadFixture(), identity: alice }).user.email).toBe('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976')
        // Reddit's documented phone vector: "+15554441234" → e5b124c5…; phone_number is the E.164-with-plus variant.
        expect(sha256Hex('+15554441234')).toBe('e5b124c58580eb16bd959b8d0cac12b12c952e2ceae0203d416cff94f10b994a')
        const event = withRdtCid(purchaseFixture())
        expect(one(event)).toMatchObject({ click_id: 'a7d0bd6c-2cf2-4c1e-9d3b-5f0e1a2b3c4d' })
        expect(one(event).user).toEqual({
          email: HASHED_PERSON.emailReddit, phone_number: HASHED_PERSON.phoneE164, external_id: HASHED_PERSON.externalId,
          ip_address: sha256Hex('203.0.113.7'), user_agent: USER_AGENT,
        })
      })

      it('maps the channel to action_source; an in-store sale carries no click id, IP, user agent or page', () => {
        const source = (channel: ConversionEvent['channel']) => one({ ...withRdtCid(purchaseFixture()), channel })
        expect(source('online')).toMatchObject({ action_source: 'WEBSITE', event_source_url: 'https://shop.example.com/checkout/thank-you', click_id: expect.any(String) })
        expect(source('bopis')).toMatchObject({ action_source: 'WEBSITE' })
        expect(source('phone')).toMatchObject({ action_source: 'OTHER' })
        expect(source('phone')).not.toHaveProperty('event_source_url')
        const store = source('in_store')
        expect(store.action_source).toBe('PHYSICAL_STORE')
        expect(Object.keys(store)).not.toContain('click_id')
        expect(Object.keys(store)).not.toContain('event_source_url')
        expect(Object.keys(store.user).sort()).toEqual(['email', 'external_id', 'phone_number'])
      })

      it('puts value (base unit), currency, item count and products in metadata where the event type takes them', () => {
        expect(one(purchaseFixture()).metadata).toEqual({
          conversion_id: 'msg-purchase-0001', value: 129.85, currency: 'EUR', item_count: 3,
          products: [
            { id: 'SHIRT-RED-M', name: 'Red shirt', category: 'Shirts', quantity: 2, item_price: 39.95 },
            { id: 'CAP-BLK', name: 'Black cap', quantity: 1, item_price: 49.95 },
          ],
        })
        const lead = { ...purchaseFixture(), standardEvent: 'Lead' as const }
        expect(one(lead).metadata).toEqual({ conversion_id: 'msg-purchase-0001', value: 129.85, currency: 'EUR' })
        const { currency: _currency, ...noCurrency } = purchaseFixture()
        expect(one(noCurrency).metadata).not.toHaveProperty('value')
        expect(one(registrationFixture()).metadata).toEqual({ conversion_id: 'msg-signup-0001' })
      })

      it('maps denied consent to Limited Data Use; granted and unknown add nothing', async () => {
        for (const consent of [{ adUserData: 'denied', adPersonalization: 'granted' }, { adUserData: 'granted', adPersonalization: 'denied' }] as const) {
          expect(one({ ...leadFixture(), consent }).user.data_processing_options).toEqual({ modes: ['LDU'] })
        }
        for (const state of ['granted', 'unknown'] as const) {
          expect(one({ ...leadFixture(), consent: { adUserData: state, adPersonalization: state } }).user).not.toHaveProperty('data_processing_options')
        }
        const denied = { ...leadFixture(new Date()), consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const
        expect((await send(reddit.toRequest([denied], resolved))).status).toBe(200)
        expect(fake.events.at(-1)!.user).toMatchObject({ data_processing_options: { modes: ['LDU'] } })
      })

      it('adds data.test_id only when testId is configured; the fake files those events under it', async () => {
        expect(mapped([leadFixture()]).data).not.toHaveProperty('test_id')
        const testing = resolve({ testId: 't2_eventtesting42' })
        expect(mapped([leadFixture()], testing).data.test_id).toBe('t2_eventtesting42')
        expect((await send(reddit.toRequest([leadFixture(new Date())], testing))).status).toBe(200)
        expect(fake.batches.at(-1)).toMatchObject({ testId: 't2_eventtesting42' })
      })

      it('takes per-site event mapping overrides, custom names included, and skips a switched-off event', async () => {
        const custom = resolve({ events: { CompleteRegistration: 'LEAD', Schedule: { custom: 'Demo booked' }, Lead: false } })
        expect(one(registrationFixture(), custom).type).toEqual({ tracking_type: 'LEAD' })
        const schedule = { ...leadFixture(new Date()), standardEvent: 'Schedule' as const }
        expect(one(schedule, custom).type).toEqual({ tracking_type: 'CUSTOM', custom_event_name: 'Demo booked' })
        expect(one(purchaseFixture(), custom).type).toEqual({ tracking_type: 'PURCHASE' })
        expect((await send(reddit.toRequest([schedule], custom))).status).toBe(200)
        expect(reddit.skipReason!(leadFixture(), custom)).toMatch(/configured not to send Lead/)
        expect(reddit.skipReason!(leadFixture(), resolved)).toBeUndefined()
        expect(planDelivery(reddit, [leadFixture()], custom)).toEqual({ refused: { 'msg-lead-0001': expect.stringMatching(/configured not to send Lead/) }, sent: [] })
      })

      it('skips an event with no match key, saying why; the rest go in one request and are sent', async () => {
        const nobody: ConversionEvent = { ...registrationFixture(new Date()), messageId: 'msg-nobody', identity: { email: HASHED_PERSON.email }, ip: '198.51.100.4' }
        expect(reddit.skipReason!(nobody, resolved)).toMatch(/no match key/)
        expect(reddit.skipReason!({ ...nobody, userAgent: USER_AGENT }, resolved)).toBeUndefined()
        expect(reddit.skipReason!({ ...nobody, clickIds: { rdt_cid: 'abc' } }, resolved)).toBeUndefined()
        const events = [leadFixture(new Date()), nobody, purchaseFixture(new Date())]
        const plan = planDelivery(reddit, events, resolved)
        expect(plan.refused).toEqual({ 'msg-nobody': expect.stringContaining('no match key') })
        expect(eventsOf(JSON.parse(plan.request!.body)).map((e) => e.metadata.conversion_id)).toEqual(['msg-lead-0001', 'msg-purchase-0001'])
        const outcomes = reddit.parseResponse(await send(plan.request!), plan.sent)
        expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent'])
      })

      it('one stale event sinks the request; it is rejected, the others retried, and a resend of those is accepted', async () => {
        const events = [leadFixture(new Date()), { ...purchaseFixture(new Date()), occurredAt: new Date(Date.now() - 8 * 86_400_000) }, registrationFixture(new Date())]
        const response = await send(reddit.toRequest(events, resolved))
        expect(JSON.parse(response.body)).toEqual({ error: { code: 400, message: 'There were 1 invalid conversion events. None were processed.', fields: [{ field: '$.data.events[1].event_at', message: 'event_at timestamp must be less than 168h0m0s old' }] } })
        const outcomes = reddit.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry'])
        expect(outcomes[1]).toMatchObject({ message: expect.stringContaining('$.data.events[1].event_at: event_at timestamp must be less than 168h0m0s old') })
        expect((await send(reddit.toRequest([events[0]!, events[2]!], resolved))).status).toBe(200)
      })

      it('the fake refuses event_at in seconds, v2-shaped events and unhashed match keys', async () => {
        const event = one(leadFixture(new Date()))
        const post = (body: unknown) => send({ ...reddit.toRequest([], resolved), body: JSON.stringify(body) })
        const seconds = await post({ data: { events: [{ ...event, event_at: Math.floor(event.event_at / 1000) }] } })
        expect(JSON.parse(seconds.body).error.fields).toEqual([{ field: '$.data.events[0].event_at', message: 'event_at timestamp must be less than 168h0m0s old' }])
        const v2 = await post({ data: { events: [{ ...event, event_type: { tracking_type: 'Lead' } }] } })
        expect(JSON.parse(v2.body)).toEqual({ error: { code: 400, message: 'JSON error "unknown field" on field "event_type"' } })
        expect(JSON.parse((await post({ data: { events: [event] }, test_mode: true })).body).error.message).toBe('JSON error "unknown field" on field "test_mode"')
        const raw = await post({ data: { events: [{ ...event, user: { email: 'alice@example.com' } }] } })
        expect(reddit.parseResponse(raw, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('user.email: email must be SHA-256 hashed') })
      })
    })

    describe('reddit: reading answers', () => {
      const events = [leadFixture()]
      const outcome = (reply: Parameters<typeof toResponse>[0]) => reddit.parseResponse(toResponse(reply), events)[0]

      it('rejects permission errors with a hint, retries throttling and downtime', () => {
        expect(outcome(redditErrors.missingScope())).toMatchObject({ status: 'rejected', message: expect.stringContaining('Missing adsconversions scope') })
        expect(outcome(redditErrors.userAgentRateLimited())).toMatchObject({ status: 'retry', message: 'Reddit answered HTTP 429: Your user agent was automatically ratelimited.' })
        expect(outcome({ ...redditErrors.rateLimited(), headers: { 'Retry-After': 'Sat, 21 Nov 2026 07:01:30 GMT', 'Date': 'Sat, 21 Nov 2026 07:00:00 GMT' } })).toMatchObject({ retryAfterMs: 90_000 })
        expect(outcome(redditErrors.rateLimited())).not.toHaveProperty('retryAfterMs')
        expect(outcome(redditErrors.unavailable())).toMatchObject({ status: 'retry' })
      })

      it('reads the auth gateway\'s plain-text answer and other bare HTTP answers', () => {
        expect(outcome({ status: 401, body: 'Authorization Required' })).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^Reddit answered HTTP 401: Authorization Required\. The conversion access token/) })
        expect(outcome({ status: 502, body: '<html><h1>502 Bad Gateway</h1></html>' })).toMatchObject({ status: 'retry', message: 'Reddit answered HTTP 502: 502 Bad Gateway' })
        expect(outcome({ status: 404, body: '404 page not found' })).toMatchObject({ status: 'rejected' })
        expect(outcome({ status: 400, body: { error: { code: 400, message: 'invalid action_source: web' } } })).toEqual({ status: 'rejected', message: 'Reddit answered HTTP 400: invalid action_source: web' })
        expect(outcome({ status: 200, body: 'OK' })).toEqual({ status: 'sent' })
      })
    })

    describe('reddit: website events and what else a conversion is', () => {
      it('a website event carries its page; an online one without a page URL is OTHER, never an incomplete WEBSITE event', async () => {
        const { pageUrl: _pageUrl, ...noPage } = withRdtCid(purchaseFixture(new Date()))
        expect(one(purchaseFixture())).toMatchObject({ action_source: 'WEBSITE', event_source_url: 'https://shop.example.com/checkout/thank-you' })
        expect(one(noPage).action_source).toBe('OTHER')
        expect(one(noPage)).not.toHaveProperty('event_source_url')
        expect(one({ ...noPage, channel: 'bopis' }).action_source).toBe('OTHER')
        expect((await send(reddit.toRequest([noPage], resolved))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ action_source: 'OTHER', click_id: 'a7d0bd6c-2cf2-4c1e-9d3b-5f0e1a2b3c4d' })
      })

      it('the fake refuses event_source_url on a non-website event, as the v3 migration guide allows it on WEBSITE only', async () => {
        const event = { ...one(purchaseFixture(new Date())), action_source: 'PHYSICAL_STORE' }
        const response = await send({ ...reddit.toRequest([], resolved), body: JSON.stringify({ data: { events: [event] } }) })
        expect(JSON.parse(response.body).error.fields).toEqual([{ field: '$.data.events[0].event_source_url', message: 'event_source_url may only be sent with action_source WEBSITE' }])
      })
    })

    describe('reddit: batches, rate and partial failures', () => {
      it('declares 1,000 events a request and 10 requests/s (10,000 events/s, and Event Testing\'s 10 test events/s)', () => {
        expect([reddit.maxBatchSize, reddit.maxRequestsPerSecond]).toEqual([1000, 10])
      })

      it('a batch with two bad events: Reddit names both, they are rejected, the three others retried and then taken', async () => {
        const now = Date.now()
        const events = batchOf(5, new Date(now)).map((event, index) => (index === 1 || index === 3 ? { ...event, occurredAt: new Date(now - 8 * 86_400_000) } : event))
        const response = await send(reddit.toRequest(events, resolved))
        expect(response.status).toBe(400)
        expect(JSON.parse(response.body).error.message).toBe('There were 2 invalid conversion events. None were processed.')
        const outcomes = reddit.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry', 'rejected', 'retry'])
        expect(outcomes[3]).toMatchObject({ message: expect.stringContaining('$.data.events[3].event_at') })
        const good = [events[0]!, events[2]!, events[4]!]
        expect(reddit.parseResponse(await send(reddit.toRequest(good, resolved)), good).map((o) => o.status)).toEqual(['sent', 'sent', 'sent'])
        expect(fake.events.slice(-3).map((e) => e.metadata.conversion_id)).toEqual(['msg-batch-0000', 'msg-batch-0002', 'msg-batch-0004'])
      })
    })

    describe('reddit: documented error answers', () => {
      // The error table of Reddit's Conversions API v3 docs (https://ads-api.reddit.com/docs/v3/, Conversions API →
      // Direct Integration; read 2026-11-26 in the copy kept by segmentio/action-destinations,
      // reddit-conversions-api/V3-API-REFERENCE.md). The table gives status and message; the body is v3's
      // `{ error: { code, message } }`.
      const documented = (code: number, message: string) => ({ status: code, body: { error: { code, message } } })
      const cases: [number, string, 'retry' | 'rejected'][] = [
        [400, 'There were 1 invalid conversion events. None were processed.', 'rejected'],
        [400, 'Bad Request', 'rejected'],
        [401, 'No bearer token provided', 'rejected'],
        [401, 'UNAUTHORIZED', 'rejected'],
        [403, 'You\'re not authorized to post conversions to Pixel ID a2_fake1234abcd.', 'rejected'],
        [403, 'Missing adsconversions scope to post conversions to Pixel.', 'rejected'],
        [429, 'Your user agent was automatically ratelimited.', 'retry'],
        [429, 'Too many requests/events within timeframe.', 'retry'],
        [500, 'The service is currently unavailable. No conversion events were processed.', 'retry'],
      ]
      it.each(cases)('HTTP %i %s → %s, quoting Reddit', (code, message, status) => {
        const [outcome] = reddit.parseResponse(toResponse(documented(code, message)), [leadFixture()])
        expect(outcome).toMatchObject({ status, message: expect.stringContaining(message) })
      })
    })

    describe('reddit: US privacy (Limited Data Use)', () => {
      it('sends LDU with country US and region US-CA for a California opt-out; the fake takes it', async () => {
        const optedOut: ConversionEvent = { ...leadFixture(new Date()), limitedDataUse: { country: 'us', state: 'ca' } }
        expect(one(optedOut).user.data_processing_options).toEqual({ modes: ['LDU'], country: 'US', region: 'US-CA' })
        expect((await send(reddit.toRequest([optedOut], resolved))).status).toBe(200)
        expect(fake.events.at(-1)!.user.data_processing_options).toEqual({ modes: ['LDU'], country: 'US', region: 'US-CA' })
      })

      it('a state alone is a US state; nothing known leaves Reddit to locate the person; no opt-out adds nothing', () => {
        expect(one({ ...leadFixture(), limitedDataUse: { state: 'co' } }).user.data_processing_options).toEqual({ modes: ['LDU'], country: 'US', region: 'US-CO' })
        expect(one({ ...leadFixture(), limitedDataUse: { country: 'us' } }).user.data_processing_options).toEqual({ modes: ['LDU'], country: 'US' })
        expect(one({ ...leadFixture(), limitedDataUse: {} }).user.data_processing_options).toEqual({ modes: ['LDU'] })
        expect(one(leadFixture()).user).not.toHaveProperty('data_processing_options')
      })

      it('the fake refuses a region that is not ISO 3166-2', async () => {
        const event = one(leadFixture(new Date()))
        const bad = { ...event, user: { ...event.user, data_processing_options: { modes: ['LDU'], country: 'US', region: 'California' } } }
        const response = await send({ ...reddit.toRequest([], resolved), body: JSON.stringify({ data: { events: [bad] } }) })
        expect(JSON.parse(response.body).error.fields).toEqual([{ field: '$.data.events[0].user.data_processing_options.region', message: 'region must be an ISO 3166-2 code, e.g. "US-CA"' }])
      })
    })
  },
})

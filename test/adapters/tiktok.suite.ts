import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import tiktok from '../../adapters/ads/tiktok/index.ts'
import type { TikTokOptions } from '../../adapters/ads/tiktok/map.ts'
import { TIKTOK_API_VERSION } from '../../adapters/ads/tiktok/version.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { hashIdentity } from '../../core/identity/hash.ts'
import { planDelivery, testAdPlatform, toResponse } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { startFakeTikTok, tiktokEnvelope, tiktokErrors } from '../fakes/tiktok.ts'

const fake = await startFakeTikTok()
afterAll(() => fake.close())

const resolved: TikTokOptions = v.parse(tiktok.options, { pixelCode: fake.pixelCode, accessToken: fake.accessToken, baseUrl: fake.url })
const withOptions = (input: Record<string, unknown>) => v.parse(tiktok.options, { pixelCode: fake.pixelCode, accessToken: fake.accessToken, baseUrl: fake.url, ...input })

interface WebEvent { event: string, event_time: number, event_id: string, [key: string]: unknown }
interface TrackBody { event_source: string, event_source_id: string, test_event_code?: string, data: WebEvent[] }
const dataOf = (body: unknown) => (body as TrackBody).data
const mapped = (events: ConversionEvent[], opts: TikTokOptions = resolved) => JSON.parse(tiktok.toRequest(events, opts).body) as TrackBody
const one = (event: ConversionEvent, opts?: TikTokOptions) => mapped([event], opts).data[0]!
/** The page core gives an online conversion that names none (the matched visit's landing page, else the site's URL). */
const onPage = (event: ConversionEvent): ConversionEvent => ({ ...event, pageUrl: 'https://shop.example.com/' })

testAdPlatform<TikTokOptions>({
  adapter: tiktok,
  folder: 'tiktok',
  options: resolved,
  invalidOptions: [
    { accessToken: 'token' },
    { pixelCode: 'CFAKEPIXEL0123456789' },
    { pixelCode: '7212345678901234567', accessToken: 'token' },
    { pixelCode: 'C-FAKE PIXEL', accessToken: 'token' },
    { pixelCode: 'CFAKEPIXEL0123456789', accessToken: '  ' },
    { pixelCode: 'CFAKEPIXEL0123456789', accessToken: 'token', baseUrl: 'business-api.tiktok.com' },
    { pixelCode: 'CFAKEPIXEL0123456789', accessToken: 'token', testEventcode: 'TEST123' },
    { pixelCode: 'CFAKEPIXEL0123456789', accessToken: 'token', events: { Purchase: '' } },
    { pixelCode: 'CFAKEPIXEL0123456789', accessToken: 'token', events: { Checkout: 'InitiateCheckout' } },
  ],
  replies: {
    success: () => tiktokEnvelope(0, 'OK'),
    auth: { ...tiktokErrors.invalidToken(), platformMessage: 'Access token is incorrect or has been revoked.' },
    rateLimit: { ...tiktokErrors.throttled(), platformMessage: 'Too many requests. Please retry in some time.' },
    serverError: { ...tiktokErrors.systemError(), platformMessage: 'System error, please try again later.' },
  },
  countEvents: (body) => dataOf(body).length,
  // TikTok deduplicates on event_source_id + event + event_id (48 h, against the pixel too).
  dedupKeyIn: (body, event) => dataOf(body).some((e) => e.event_id === event.messageId && e.event === event.standardEvent),
  additionalTests: () => {
    describe('tiktok: what reaches Events API 2.0', () => {
      it('the fake accepts the whole mapped request, records it, and the answer parses as sent', async () => {
        const events = fixtureEvents(new Date()).map(onPage)
        const response = await send(tiktok.toRequest(events, resolved))
        expect([response.status, JSON.parse(response.body)]).toMatchObject([200, { code: 0, message: 'OK' }])
        expect(fake.events.slice(-3).map((e) => e.event_id)).toEqual(events.map((e) => e.messageId))
        expect(tiktok.parseResponse(response, events)).toEqual(events.map(() => ({ status: 'sent' })))
      })

      it('the fake takes a full batch of 1000 and refuses 1001 with code 40002, which rejects every event', async () => {
        expect(JSON.parse((await send(tiktok.toRequest(batchOf(1000, new Date()), resolved))).body)).toMatchObject({ code: 0 })
        const events = batchOf(1001, new Date())
        const tooMany = await send(tiktok.toRequest(events, resolved))
        expect([tooMany.status, JSON.parse(tooMany.body)]).toMatchObject([200, { code: 40002 }])
        expect(new Set(tiktok.parseResponse(tooMany, events).map((o) => o.status))).toEqual(new Set(['rejected']))
      })

      it('sends the token in Access-Token, never in the URL or as a Bearer; a wrong token answers 200 code 40105 → rejected', async () => {
        const request = tiktok.toRequest([purchaseFixture()], resolved)
        expect(request.url).toBe(`${fake.url}/open_api/${TIKTOK_API_VERSION}/event/track/`)
        expect(request.headers).toEqual({ 'Content-Type': 'application/json', 'Access-Token': fake.accessToken })
        const events = fixtureEvents(new Date())
        const response = await send(tiktok.toRequest(events, { ...resolved, accessToken: 'wrong-token' }))
        expect([response.status, JSON.parse(response.body)]).toMatchObject([200, { code: 40105 }])
        const [outcome] = tiktok.parseResponse(response, events)
        expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^TikTok code 40105 \(HTTP 200\): Access token is incorrect or has been revoked\. \[request_id \w+\]/) })
        expect(outcome).toMatchObject({ message: expect.stringContaining('Generate Access Token') })
      })

      it('a token for another pixel gets code 40001, rejected with what to check', async () => {
        const response = await send(tiktok.toRequest([leadFixture(new Date())], { ...resolved, pixelCode: 'COTHERPIXEL000000000' }))
        expect(JSON.parse(response.body)).toMatchObject({ code: 40001 })
        expect(tiktok.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('check pixelCode') })
      })

      it('sends a web event for the pixel: event_time in unix seconds, event_id = messageId', () => {
        const event = purchaseFixture()
        const body = mapped([event])
        expect(body).toMatchObject({ event_source: 'web', event_source_id: fake.pixelCode })
        expect(body.data[0]).toMatchObject({ event: 'Purchase', event_time: Math.floor(event.occurredAt.getTime() / 1000), event_id: event.messageId })
        expect(Number.isInteger(body.data[0]!.event_time)).toBe(true)
      })

      it('puts ttclid, hashed email, phone (E.164 with +) and external id, IP and user agent under user', () => {
        const event = { ...purchaseFixture(), clickIds: { ttclid: 'E.C.P.CqgBq3xWm2ZaYl0' } }
        expect(one(event).user).toEqual({
          ttclid: 'E.C.P.CqgBq3xWm2ZaYl0', email: HASHED_PERSON.email, phone: HASHED_PERSON.phoneE164, external_id: HASHED_PERSON.externalId,
          ip: event.ip, user_agent: event.userAgent,
        })
        // No names, city, state, zip or country: Events API 2.0's user object has no such keys.
        expect(JSON.stringify(one(event))).not.toContain(HASHED_PERSON.firstName)
      })

      it('follows TikTok\'s own hashing examples end to end (core/identity → user)', () => {
        const identity = hashIdentity({ email: ' ALICE_abc@gmail.com ', phone: '+1 (213) 373-4253', external_id: 'user_123' })
        expect(one({ ...registrationFixture(), identity }).user).toEqual({
          email: '848a771458438fc2ec420560d769fb9b9b86851ee338ec56517baabd79d3bb4f',
          phone: '9f7ec22d72092cd3c0b58726ed9c2d91b92e51a3f29837508fb2948bb22dd2fd',
          external_id: '80fba0ae1c48e3978e43e4efc365e14e12ea0c830ba8ba5b9a2dafc7e3f2ab8b',
        })
      })

      it('leaves out identity values that are not SHA-256 digests instead of sending them', () => {
        const leaky = { ...leadFixture(), identity: { email: 'marguerite.okonkwo@gmail.com', phoneE164: HASHED_PERSON.phoneE164.toUpperCase(), externalId: HASHED_PERSON.externalId } }
        expect(one(leaky).user).toEqual({ external_id: HASHED_PERSON.externalId })
      })

      it('maps value, currency, order, items and page to properties and page', () => {
        expect(one(purchaseFixture())).toMatchObject({
          properties: {
            value: 129.85, currency: 'EUR', order_id: 'A-1001', content_type: 'product', num_items: 3,
            contents: [
              { content_id: 'SHIRT-RED-M', content_name: 'Red shirt', content_category: 'Shirts', brand: 'Acme', quantity: 2, price: 39.95 },
              { content_id: 'CAP-BLK', content_name: 'Black cap', quantity: 1, price: 49.95 },
            ],
          },
          page: { url: 'https://shop.example.com/checkout/thank-you' },
        })
        const { currency: _currency, ...noCurrency } = purchaseFixture()
        expect(one(noCurrency).properties).not.toHaveProperty('value')
        expect(one({ ...purchaseFixture(), currency: 'XAF' }).properties).not.toHaveProperty('currency')
        expect(one(registrationFixture())).not.toHaveProperty('properties')
      })

      it('maps adUserData denied to limited_data_use: true; granted and unknown add nothing', async () => {
        const denied = { ...onPage(leadFixture(new Date())), consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const
        expect(one(denied)).toMatchObject({ limited_data_use: true })
        for (const state of ['granted', 'unknown'] as const) {
          expect(one({ ...leadFixture(), consent: { adUserData: state, adPersonalization: state } })).not.toHaveProperty('limited_data_use')
        }
        expect(JSON.parse((await send(tiktok.toRequest([denied], resolved))).body)).toMatchObject({ code: 0 })
        expect(fake.events.at(-1)).toMatchObject({ limited_data_use: true })
      })

      it('adds test_event_code at the top level only when configured; the fake files those events under it', async () => {
        expect(mapped([leadFixture()])).not.toHaveProperty('test_event_code')
        const testing = withOptions({ testEventCode: 'TEST40211' })
        expect(mapped([leadFixture()], testing).test_event_code).toBe('TEST40211')
        expect(JSON.parse((await send(tiktok.toRequest([onPage(leadFixture(new Date()))], testing))).body)).toMatchObject({ code: 0 })
        expect(fake.batches.at(-1)).toMatchObject({ testEventCode: 'TEST40211' })
      })

      it('maps the four standard events to TikTok names with per-site overrides (the legacy CompletePayment)', async () => {
        expect(resolved.events).toEqual({ Purchase: 'Purchase', Lead: 'Lead', CompleteRegistration: 'CompleteRegistration', Schedule: 'Schedule' })
        const legacy = withOptions({ events: { Purchase: 'CompletePayment', Lead: ' SubmitForm ' } })
        expect(legacy.events).toEqual({ Purchase: 'CompletePayment', Lead: 'SubmitForm', CompleteRegistration: 'CompleteRegistration', Schedule: 'Schedule' })
        expect(mapped(fixtureEvents(), legacy).data.map((e) => e.event)).toEqual(['CompletePayment', 'SubmitForm', 'CompleteRegistration'])
        expect(JSON.parse((await send(tiktok.toRequest([purchaseFixture(new Date())], legacy))).body)).toMatchObject({ code: 0 })
        expect(fake.events.at(-1)).toMatchObject({ event: 'CompletePayment', event_id: 'msg-purchase-0001' })
      })

      it('skips an event turned off with null, and one with nothing for TikTok to match; neither is ever in a request', () => {
        const noSchedule = withOptions({ events: { Schedule: null } })
        const schedule: ConversionEvent = { ...onPage(leadFixture()), standardEvent: 'Schedule' }
        expect(tiktok.skipReason!(schedule, noSchedule)).toContain('events.Schedule is null')
        expect(tiktok.skipReason!(schedule, resolved)).toBeUndefined()
        expect(planDelivery(tiktok, [schedule], noSchedule)).toEqual({ refused: { [schedule.messageId]: expect.stringContaining('events.Schedule is null') }, sent: [] })
        const nobody: ConversionEvent = { ...onPage(registrationFixture()), identity: {}, clickIds: { gclid: 'Cj0K' } }
        expect(tiktok.skipReason!(nobody, resolved)).toMatch(/^no ttclid, hashed email, phone or external id, IP address or user agent/)
        expect(tiktok.skipReason!({ ...nobody, clickIds: { ttclid: 'E.C.P.x' } }, resolved)).toBeUndefined()
        for (const event of fixtureEvents()) expect(tiktok.skipReason!(onPage(event), resolved)).toBeUndefined()
        // The lead and the sign-up fixtures carry no page URL: not a website event TikTok can take.
        expect(fixtureEvents().map((event) => tiktok.skipReason!(event, resolved))).toEqual([undefined, expect.stringMatching(/^no page URL/), expect.stringMatching(/^no page URL/)])
      })

      it('the fake refuses raw personal data, milliseconds and events older than 7 days with code 40002', async () => {
        const good = one(leadFixture(new Date()))
        const cases = [
          [{ ...good, user: { email: 'marguerite.okonkwo@gmail.com' } }, 'user.email: must be hashed'],
          [{ ...good, event_time: good.event_time * 1000 }, 'in the future'],
          [{ ...good, event_time: good.event_time - 8 * 86_400 }, 'more than 7 days old'],
          [{ ...good, event_id: 12345 }, 'Invalid value for event_id: not a valid string.'],
        ] as const
        for (const [event, words] of cases) {
          const response = await send({ ...tiktok.toRequest([], resolved), body: JSON.stringify({ ...mapped([]), data: [event] }) })
          expect(JSON.parse(response.body)).toMatchObject({ code: 40002, message: expect.stringContaining(words) })
          expect(tiktok.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining(words) })
        }
      })
    })

    describe('tiktok: reading TikTok answers', () => {
      const events = [leadFixture()]
      const outcome = (reply: Parameters<typeof toResponse>[0]) => tiktok.parseResponse(toResponse(reply), events)[0]

      it('classifies by the body\'s code under HTTP 200: throttling and system errors retry, token and parameter errors reject', () => {
        expect(outcome(tiktokErrors.throttled())).toMatchObject({ status: 'retry', message: expect.stringContaining('TikTok code 40100') })
        expect(outcome(tiktokErrors.systemError(50002))).toMatchObject({ status: 'retry' })
        expect(outcome(tiktokErrors.systemError(51021))).toMatchObject({ status: 'retry' })
        expect(outcome(tiktokErrors.missingToken())).toMatchObject({ status: 'rejected', message: expect.stringContaining('update accessToken') })
        expect(outcome(tiktokEnvelope(40102, 'Access token has expired.'))).toMatchObject({ status: 'rejected', message: expect.stringContaining('Generate Access Token') })
        expect(outcome(tiktokErrors.invalidParameter('Invalid value for event_id: not a valid string.')))
          .toEqual({ status: 'rejected', message: expect.stringMatching(/^TikTok code 40002 \(HTTP 200\): Invalid value for event_id: not a valid string\. \[request_id \w+\]$/) })
      })

      it('counts partial success (20001) as sent, and retries a 2xx without TikTok\'s envelope', () => {
        expect(outcome(tiktokEnvelope(20001, 'Partial success'))).toEqual({ status: 'sent' })
        expect(outcome({ status: 200, body: '<html>OK</html>' })).toMatchObject({ status: 'retry', message: expect.stringContaining('without its {code, message} body') })
        expect(outcome({ status: 200, body: { data: {} } })).toMatchObject({ status: 'retry' })
      })

      it('classifies bare HTTP answers and envelopes under an error status by both', () => {
        expect(outcome({ status: 502, body: '' })).toMatchObject({ status: 'retry', message: 'TikTok answered HTTP 502 with an empty body' })
        expect(outcome({ status: 500, body: { code: 50000, message: 'Internal error' } })).toMatchObject({ status: 'retry' })
        expect(outcome({ status: 501, body: 'Not Implemented' })).toMatchObject({ status: 'rejected' })
        expect(outcome({ status: 429, body: { code: 40100, message: 'Too many requests' } })).toMatchObject({ status: 'retry' })
      })

      it('waits as long as Retry-After says, in seconds or as a date', () => {
        expect(outcome({ ...tiktokErrors.throttled(), headers: { 'Retry-After': '30' } })).toMatchObject({ retryAfterMs: 30_000 })
        const headers = { 'Retry-After': 'Mon, 02 Mar 2026 10:01:30 GMT', 'Date': 'Mon, 02 Mar 2026 10:00:00 GMT' }
        expect(outcome({ ...tiktokErrors.systemError(), headers })).toMatchObject({ status: 'retry', retryAfterMs: 90_000 })
        expect(outcome(tiktokErrors.throttled())).not.toHaveProperty('retryAfterMs')
      })
    })

    describe('tiktok: offline and CRM events, each in a request of its own (event sources of the Events API 2.0 reference)', () => {
      const sources = withOptions({ offlineEventSetId: fake.offlineEventSetId, crmEventSetId: fake.crmEventSetId })
      const store = { ...purchaseFixture(new Date()), messageId: 'msg-store-1', channel: 'in_store', clickIds: { ttclid: 'E.C.P.store' } } as const
      const crmLead: ConversionEvent = { ...leadFixture(new Date()), messageId: 'msg-crm-1', event: 'qualified_lead', clickIds: { tt_lead_id: '7312345678901234567' } }

      it('takes the event set ids as digits (a number works too) and refuses anything else', () => {
        expect(withOptions({ offlineEventSetId: 7301234567890 })).toMatchObject({ offlineEventSetId: '7301234567890' })
        for (const bad of ['store', 'C7301', '', 12.5]) expect(v.safeParse(tiktok.options, { ...resolved, offlineEventSetId: bad }).success, String(bad)).toBe(false)
        expect(v.safeParse(tiktok.options, { ...resolved, crmEventSetId: 'crm' }).success).toBe(false)
      })

      it('sends a sale in a store or by phone as an offline event to the Offline Event Set: email and phone only, no page, IP, user agent or ttclid', async () => {
        expect(tiktok.requestGroup!(store, sources)).toBe('offline')
        expect(tiktok.requestGroup!(purchaseFixture(), sources)).toBeUndefined()
        expect(tiktok.skipReason!(store, sources)).toBeUndefined()
        const phone = { ...store, messageId: 'msg-phone-1', channel: 'phone' } as const
        const body = mapped([store, phone], sources)
        expect(body).toMatchObject({ event_source: 'offline', event_source_id: fake.offlineEventSetId })
        expect(body.data[0]).toMatchObject({ event: 'Purchase', event_id: 'msg-store-1', user: { email: HASHED_PERSON.email, phone: HASHED_PERSON.phoneE164 }, properties: { value: 129.85, currency: 'EUR', order_id: 'A-1001' } })
        for (const key of ['ttclid', 'ip', 'user_agent', 'external_id']) expect(body.data[0]!.user).not.toHaveProperty(key)
        expect(body.data[0]).not.toHaveProperty('page')
        const response = await send(tiktok.toRequest([store, phone], sources))
        expect(tiktok.parseResponse(response, [store, phone])).toEqual([{ status: 'sent' }, { status: 'sent' }])
        expect(fake.batches.at(-1)).toMatchObject({ eventSource: 'offline', eventSourceId: fake.offlineEventSetId })
      })

      it('skips an offline event without the option, without email or phone, or that may not be sent unlimited (no limited_data_use offline)', () => {
        expect(tiktok.skipReason!(store, resolved)).toMatch(/^a sale in a store is an offline event for TikTok: set offlineEventSetId/)
        expect(tiktok.skipReason!({ ...store, identity: {} }, sources)).toBe('no hashed email or phone: TikTok matches an offline event by those only')
        expect(tiktok.skipReason!({ ...store, limitedDataUse: {} }, sources)).toMatch(/cannot carry limited_data_use .* not sent$/)
        expect(tiktok.skipReason!({ ...store, consent: { adUserData: 'denied', adPersonalization: 'granted' } }, sources)).toMatch(/cannot carry limited_data_use/)
      })

      it('sends a lead from TikTok\'s lead form as a CRM event when crmEventSetId is set: lead.lead_id, the site\'s event key as its custom name', async () => {
        expect(tiktok.requestGroup!(crmLead, sources)).toBe('crm')
        expect(tiktok.requestGroup!(crmLead, resolved)).toBeUndefined()
        const body = mapped([crmLead], sources)
        expect(body).toMatchObject({ event_source: 'crm', event_source_id: sources.crmEventSetId })
        expect(body.data[0]).toMatchObject({ event: 'qualified_lead', event_id: 'msg-crm-1', lead: { lead_id: '7312345678901234567', lead_event_source: 'dcgate' }, user: { email: HASHED_PERSON.email } })
        for (const key of ['ip', 'user_agent']) expect(body.data[0]!.user).not.toHaveProperty(key)
        expect(body.data[0]).not.toHaveProperty('page')
        const response = await send(tiktok.toRequest([crmLead], sources))
        expect(tiktok.parseResponse(response, [crmLead])).toEqual([{ status: 'sent' }])
        expect(fake.batches.at(-1)).toMatchObject({ eventSource: 'crm', data: [expect.objectContaining({ lead: expect.objectContaining({ lead_id: '7312345678901234567' }) })] })
      })

      it('the fake refuses what the reference does not let a source take: another source\'s id, web-only fields, a CRM event without lead_id', async () => {
        const offline = JSON.parse(tiktok.toRequest([store], sources).body) as TrackBody
        const answer = async (body: unknown) => JSON.parse((await send({ ...tiktok.toRequest([], sources), body: JSON.stringify(body) })).body) as { code: number, message: string }
        expect(await answer({ ...offline, event_source_id: fake.pixelCode })).toMatchObject({ code: 40001 })
        expect(await answer({ ...offline, data: [{ ...offline.data[0], user: { ip: '203.0.113.7' } }] })).toMatchObject({ code: 40002, message: 'data[0]: user.ip is not supported for offline events.' })
        expect(await answer({ ...offline, data: [{ ...offline.data[0], limited_data_use: true }] })).toMatchObject({ code: 40002 })
        const crm = JSON.parse(tiktok.toRequest([crmLead], sources).body) as TrackBody
        const { lead: _lead, ...noLead } = crm.data[0]!
        expect(await answer({ ...crm, data: [noLead] })).toMatchObject({ code: 40002, message: 'data[0]: lead.lead_id is required for crm events.' })
      })
    })

    describe('tiktok: website events need a page, as the Events API 2.0 reference asks', () => {
      it('skips a sale in a store or by phone when no Offline Event Set is configured, and an online one without a page URL, saying why; never an incomplete web event', () => {
        const store = { ...purchaseFixture(), channel: 'in_store' } as const
        expect(tiktok.skipReason!(store, resolved)).toMatch(/^a sale in a store is an offline event for TikTok/)
        expect(tiktok.skipReason!({ ...purchaseFixture(), channel: 'phone' }, resolved)).toMatch(/^a sale by phone is an offline event/)
        const { pageUrl: _pageUrl, ...noPage } = purchaseFixture()
        expect(tiktok.skipReason!(noPage, resolved)).toMatch(/^no page URL: TikTok requires page\.url/)
        expect(tiktok.skipReason!({ ...purchaseFixture(), channel: 'bopis' }, resolved)).toBeUndefined()
        const plan = planDelivery(tiktok, [store, purchaseFixture(), noPage], resolved)
        expect(Object.keys(plan.refused)).toHaveLength(1)
        expect(mapped(plan.sent).data.map((e) => e.page)).toEqual([{ url: 'https://shop.example.com/checkout/thank-you' }])
      })

      it('the fake refuses a web event without page.url (40002), as the reference marks page required for web events', async () => {
        const response = await send(tiktok.toRequest([leadFixture(new Date())], resolved))
        expect(JSON.parse(response.body)).toMatchObject({ code: 40002, message: 'data[0]: page.url is required for web events.' })
      })
    })

    describe('tiktok: batches and partial failures', () => {
      it('declares 1,000 events a request and a rate of 10 requests/s (no published figure: README "Rate limit")', () => {
        expect([tiktok.maxBatchSize, tiktok.maxRequestsPerSecond]).toEqual([1000, 10])
      })

      it('a batch refused for the event it names: that one rejected, the rest retried and then taken', async () => {
        const now = new Date()
        const stale = (event: ConversionEvent) => ({ ...event, occurredAt: new Date(now.getTime() - 8 * 86_400_000) })
        const events = batchOf(4, now).map((event, index) => (index === 1 || index === 3 ? stale(event) : event))
        const first = await send(tiktok.toRequest(events, resolved))
        expect(JSON.parse(first.body)).toMatchObject({ code: 40002, message: expect.stringMatching(/^data\[1\]: .*more than 7 days old/) })
        const outcomes = tiktok.parseResponse(first, events)
        expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry', 'retry'])
        expect(outcomes[0]).toMatchObject({ message: expect.stringContaining('because of other events in it') })
        // The worker sends the retried ones again; TikTok names the next bad one by its new index.
        const again = [events[0]!, events[2]!, events[3]!]
        const second = await send(tiktok.toRequest(again, resolved))
        expect(tiktok.parseResponse(second, again).map((o) => o.status)).toEqual(['retry', 'retry', 'rejected'])
        const last = [events[0]!, events[2]!]
        expect(tiktok.parseResponse(await send(tiktok.toRequest(last, resolved)), last)).toEqual([{ status: 'sent' }, { status: 'sent' }])
        expect(fake.events.slice(-2).map((e) => e.event_id)).toEqual(['msg-batch-0000', 'msg-batch-0002'])
      })

      it('a refusal naming no event, or a one-event request, gives every event the same outcome', () => {
        const events = fixtureEvents()
        const outcomes = tiktok.parseResponse(toResponse(tiktokErrors.invalidParameter('The request body must be a JSON object.')), events)
        expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected'])
        expect(tiktok.parseResponse(toResponse(tiktokErrors.invalidParameter('data[0]: event is required.')), [leadFixture()])).toMatchObject([{ status: 'rejected' }])
        expect(tiktok.parseResponse(toResponse(tiktokErrors.invalidParameter('data[7]: event is required.')), events).map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected'])
      })
    })

    describe('tiktok: documented answers', () => {
      // TikTok's response body, as its own SDK documents it (tiktok/tiktok-business-api-sdk,
      // python_sdk/docs/InlineResponse200.md: code, message, request_id, data; codes listed in the API for Business
      // "Appendix - Return Codes", https://ads.tiktok.com/marketing_api/docs?id=1737172488964097, not held by the corpora).
      const documented = (code: number, message: string) => ({ status: 200, body: { code, message, request_id: '202611260000000102151230412FAA2F1E', data: {} } })
      const cases: [number, string, 'retry' | 'rejected' | 'sent'][] = [
        [0, 'OK', 'sent'],
        [40100, 'Too many requests. Please retry in some time.', 'retry'],
        [50000, 'System error', 'retry'],
        [50002, 'System busy', 'retry'],
        [40001, 'No permission to operate pixel code', 'rejected'],
        [40002, 'Invalid parameters', 'rejected'],
        [40102, 'Access token has expired.', 'rejected'],
        [40104, 'Access token is empty.', 'rejected'],
        [40105, 'Access token is incorrect or has been revoked.', 'rejected'],
      ]
      it.each(cases)('code %i (%s) → %s', (code, message, status) => {
        expect(tiktok.parseResponse(toResponse(documented(code, message)), [leadFixture()])[0]!.status).toBe(status)
      })
    })

    describe('tiktok: US privacy (limited data use)', () => {
      it('sends limited_data_use: true for a US state opt-out, without country or state (TikTok takes neither); the fake takes it', async () => {
        const optedOut: ConversionEvent = { ...purchaseFixture(new Date()), limitedDataUse: { country: 'us', state: 'ca' } }
        const event = one(optedOut)
        expect(event).toMatchObject({ limited_data_use: true })
        expect(JSON.stringify(event)).not.toMatch(/"(country|state|region)"/)
        expect(one({ ...purchaseFixture(), limitedDataUse: {} })).toMatchObject({ limited_data_use: true })
        expect(one(purchaseFixture())).not.toHaveProperty('limited_data_use')
        expect(JSON.parse((await send(tiktok.toRequest([optedOut], resolved))).body)).toMatchObject({ code: 0 })
        expect(fake.events.at(-1)).toMatchObject({ event_id: 'msg-purchase-0001', limited_data_use: true })
      })
    })
  },
})

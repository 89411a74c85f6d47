import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import pinterest from '../../adapters/ads/pinterest/index.ts'
import type { PinterestOptions } from '../../adapters/ads/pinterest/map.ts'
import { PINTEREST_API_VERSION } from '../../adapters/ads/pinterest/version.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { hashIdentity, sha256Hex } from '../../core/identity/hash.ts'
import { planDelivery, testAdPlatform, toResponse } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { pinterestErrors, startFakePinterest } from '../fakes/pinterest.ts'

const fake = await startFakePinterest()
afterAll(() => fake.close())

const options: PinterestOptions = { adAccountId: fake.adAccountId, accessToken: fake.accessToken, baseUrl: fake.url }
const resolved = v.parse(pinterest.options, options)

interface ServerEvent { event_name: string, event_time: number, event_id: string, action_source: string, [key: string]: any }
const dataOf = (body: unknown) => (body as { data: ServerEvent[] }).data
const mapped = (events: ConversionEvent[], opts: PinterestOptions = resolved) => dataOf(JSON.parse(pinterest.toRequest(events, opts).body))
const one = (event: ConversionEvent, opts: PinterestOptions = resolved) => mapped([event], opts)[0]!
const processed = { status: 'processed', error_message: null, warning_message: null }
const failed = (error_message: string) => ({ status: 'failed', error_message, warning_message: null })

testAdPlatform<PinterestOptions>({
  adapter: pinterest,
  folder: 'pinterest',
  options,
  invalidOptions: [
    { accessToken: 'token' },
    { adAccountId: '549755885175' },
    { adAccountId: 549755885175, accessToken: 'token' },
    { adAccountId: 'act_549755885175', accessToken: 'token' },
    { adAccountId: '1234567890123456789', accessToken: 'token' },
    { adAccountId: '549755885175', accessToken: '  ' },
    { adAccountId: '549755885175', accessToken: 'token', baseUrl: 'api.pinterest.com' },
    { adAccountId: '549755885175', accessToken: 'token', testmode: true },
    { adAccountId: '549755885175', accessToken: 'token', testMode: 'yes' },
    { adAccountId: '549755885175', accessToken: 'token', eventNames: { Purchase: 'purchase' } },
    { adAccountId: '549755885175', accessToken: 'token', eventNames: { purchase: 'checkout' } },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { num_events_received: events.length, num_events_processed: events.length, events: events.map(() => processed) } }),
    partial: (events) => ({
      reply: {
        ...pinterestErrors.notAllProcessed(events.map((_, i) => ({
          status: i === 1 ? 'failed' : 'processed',
          error_message: i === 1 ? 'Invalid event_timestamp parameter. Given timestamp is in the past.' : '',
          warning_message: '',
        }))),
      },
      statuses: events.map((_, i) => (i === 1 ? 'rejected' : 'sent')),
    }),
    auth: { ...pinterestErrors.authenticationFailed(), platformMessage: 'Authentication failed.' },
    rateLimit: { ...pinterestErrors.rateLimited(), platformMessage: 'You have exceeded your rate limit. Try again later.' },
    serverError: { ...pinterestErrors.rampedDown(), platformMessage: 'The endpoint has been ramped down and is currently not accepting any traffic.' },
  },
  countEvents: (body) => dataOf(body).length,
  // Pinterest deduplicates on event_id, against the Pinterest Tag's event id too.
  dedupKeyIn: (body, event) => dataOf(body).some((e) => e.event_id === event.messageId),
  additionalTests: () => {
    describe('pinterest: what reaches the Conversions API', () => {
      it('the fake processes the whole mapped request, records it, and the answer parses as sent', async () => {
        const events = fixtureEvents(new Date())
        const response = await send(pinterest.toRequest(events, resolved))
        expect(response.status).toBe(200)
        expect(JSON.parse(response.body)).toMatchObject({ num_events_received: 3, num_events_processed: 3 })
        expect(fake.events.slice(-3).map((e) => e.event_id)).toEqual(events.map((e) => e.messageId))
        expect(pinterest.parseResponse(response, events)).toEqual(events.map(() => ({ status: 'sent' })))
      })

      it('the fake takes a full batch of 1000 and refuses 1001 for the whole request', async () => {
        expect((await send(pinterest.toRequest(batchOf(1000, new Date()), resolved))).status).toBe(200)
        const events = batchOf(1001, new Date())
        const tooMany = await send(pinterest.toRequest(events, resolved))
        expect(tooMany.status).toBe(400)
        const outcomes = pinterest.parseResponse(tooMany, events)
        expect(outcomes.every((o) => o.status === 'rejected')).toBe(true)
        expect(outcomes[0]).toMatchObject({ message: expect.stringContaining('at most 1000 events') })
      })

      it('sends the conversion token as a Bearer header on the pinned path; a wrong token is rejected with what to do', async () => {
        const request = pinterest.toRequest([purchaseFixture()], resolved)
        expect(request.headers.Authorization).toBe(`Bearer ${fake.accessToken}`)
        expect(request.url).toBe(`${fake.url}/${PINTEREST_API_VERSION}/ad_accounts/${fake.adAccountId}/events`)
        const events = fixtureEvents(new Date())
        const response = await send(pinterest.toRequest(events, { ...resolved, accessToken: 'pina_revoked' }))
        expect([response.status, JSON.parse(response.body)]).toEqual([401, { code: 2, message: 'Authentication failed.' }])
        expect(pinterest.parseResponse(response, events)[0]).toMatchObject({ status: 'rejected', message: expect.stringMatching(/^Pinterest code 2 \(HTTP 401\): Authentication failed\. .*Generate new token/) })
      })

      it('an ad account the token cannot reach gets 403 → rejected, naming the roles to grant', async () => {
        const response = await send(pinterest.toRequest([leadFixture(new Date())], { ...resolved, adAccountId: '111111111111' }))
        expect(response.status).toBe(403)
        expect(pinterest.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('Owner, Admin, Analyst, Audience or Campaign role') })
      })

      it('sends event_time in unix seconds, event_id = messageId, and the default event names', () => {
        const event = purchaseFixture()
        expect(one(event)).toMatchObject({ event_name: 'checkout', event_time: Math.floor(event.occurredAt.getTime() / 1000), event_id: 'msg-purchase-0001' })
        expect(Number.isInteger(one(event).event_time)).toBe(true)
        expect(mapped(fixtureEvents()).map((e) => e.event_name)).toEqual(['checkout', 'lead', 'signup'])
        expect(one({ ...leadFixture(), standardEvent: 'Schedule' }).event_name).toBe('custom')
      })

      it('sends every standard event under a name of the reference\'s list, which the fake processes; the options refuse names outside it', async () => {
        const now = new Date()
        const events: ConversionEvent[] = (['Purchase', 'Lead', 'CompleteRegistration', 'Schedule'] as const)
          .map((standardEvent, i) => ({ ...leadFixture(now), messageId: `msg-name-${i}`, standardEvent }))
        const response = await send(pinterest.toRequest(events, resolved))
        expect(response.status).toBe(200)
        expect(pinterest.parseResponse(response, events).map((o) => o.status)).toEqual(['sent', 'sent', 'sent', 'sent'])
        expect(fake.events.slice(-4).map((e) => e.event_name)).toEqual(['checkout', 'lead', 'signup', 'custom'])
        // Names the guide's table shows but the reference's event_name list does not.
        for (const name of ['schedule', 'contact', 'start_trial', 'submit_application', 'find_location', 'app_open']) {
          expect(v.safeParse(pinterest.options, { ...options, eventNames: { Schedule: name } }).success, name).toBe(false)
        }
        expect(v.parse(pinterest.options, { ...options, eventNames: { Schedule: 'lead' } }).eventNames).toMatchObject({ Schedule: 'lead' })
      })

      it('maps the channel to action_source: web for online and BOPIS, offline for in-store and phone', () => {
        const source = (channel: ConversionEvent['channel']) => one({ ...purchaseFixture(), channel }).action_source
        expect([source('online'), source('bopis'), source('in_store'), source('phone')]).toEqual(['web', 'web', 'offline', 'offline'])
      })

      it('puts hashed identity under Pinterest\'s keys as arrays, and IP, browser and epik in plain', () => {
        const event = { ...purchaseFixture(), clickIds: { epik: 'dj0yJnU9WEYtVVZpSEJQQ195RGRwWVh2Skg4Y1R2' } }
        expect(one(event).user_data).toEqual({
          em: [HASHED_PERSON.email], ph: [HASHED_PERSON.phoneDigits], fn: [HASHED_PERSON.firstName], ln: [HASHED_PERSON.lastName],
          ct: [HASHED_PERSON.city], st: [HASHED_PERSON.state], zp: [HASHED_PERSON.zip], country: [HASHED_PERSON.country],
          external_id: [HASHED_PERSON.externalId],
          client_ip_address: event.ip, client_user_agent: event.userAgent, click_id: 'dj0yJnU9WEYtVVZpSEJQQ195RGRwWVh2Skg4Y1R2',
        })
      })

      it('hashes phone as digits with country code and no + (Pinterest\'s vector 14255551234), email trimmed and lowercased', () => {
        const identity = hashIdentity({ email: ' John@Contoso.com ', phone: '+1 (425) 555-1234' })
        const userData = one({ ...leadFixture(), identity }).user_data
        expect(userData.ph).toEqual(['f8a0621a89b87b16447d34d2169bdba8e3eaae523b45df87d86108ee65bd1d6f'])
        expect(userData.em).toEqual(['ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602'])
      })

      it('maps value (as a string), currency, order and items to custom_data', () => {
        expect(one(purchaseFixture()).custom_data).toEqual({
          currency: 'EUR', value: '129.85', order_id: 'A-1001', content_ids: ['SHIRT-RED-M', 'CAP-BLK'], num_items: 3,
          contents: [
            { id: 'SHIRT-RED-M', item_price: '39.95', quantity: 2, item_name: 'Red shirt', item_category: 'Shirts', item_brand: 'Acme' },
            { id: 'CAP-BLK', item_price: '49.95', quantity: 1, item_name: 'Black cap' },
          ],
        })
        const { currency: _currency, ...noCurrency } = purchaseFixture()
        expect(one(noCurrency).custom_data).toMatchObject({ value: '129.85' })
        expect(one(noCurrency).custom_data).not.toHaveProperty('currency')
        expect(one(registrationFixture())).not.toHaveProperty('custom_data')
      })

      it('maps consent: adPersonalization denied → opt_out, adUserData denied → opt_out_type LDP; the fake processes both', async () => {
        const denied = { ...leadFixture(new Date()), consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const
        expect(one(denied)).toMatchObject({ opt_out: true, custom_data: { opt_out_type: 'LDP' } })
        for (const state of ['granted', 'unknown'] as const) {
          const event = one({ ...leadFixture(), consent: { adUserData: state, adPersonalization: state } })
          expect(event.opt_out).toBe(false)
          expect(event).not.toHaveProperty('custom_data')
        }
        expect((await send(pinterest.toRequest([denied], resolved))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ opt_out: true, custom_data: { opt_out_type: 'LDP' } })
      })

      it('appends ?test=true only in test mode; the fake answers as usual and records the batch as a test', async () => {
        expect(pinterest.toRequest([leadFixture()], resolved).url).not.toContain('test=')
        const testing = v.parse(pinterest.options, { ...options, testMode: true })
        const request = pinterest.toRequest([leadFixture(new Date())], testing)
        expect(request.url).toBe(`${fake.url}/${PINTEREST_API_VERSION}/ad_accounts/${fake.adAccountId}/events?test=true`)
        const live = fake.events.length
        expect((await send(request)).status).toBe(200)
        expect(fake.batches.at(-1)).toMatchObject({ test: true })
        expect(fake.events).toHaveLength(live)
      })

      it('lets a site override event names, or not send a standard event at all (skipped, never in a request)', () => {
        const custom = v.parse(pinterest.options, { ...options, eventNames: { Lead: 'subscribe', Schedule: false } })
        expect(one(leadFixture(), custom).event_name).toBe('subscribe')
        expect(one(purchaseFixture(), custom).event_name).toBe('checkout')
        const schedule: ConversionEvent = { ...leadFixture(), standardEvent: 'Schedule' }
        expect(pinterest.skipReason!(schedule, custom)).toBe('this site does not send Schedule to Pinterest (eventNames.Schedule is false)')
        expect(pinterest.skipReason!(schedule, resolved)).toBeUndefined()
        expect(planDelivery(pinterest, [purchaseFixture(), schedule], custom)).toMatchObject({ refused: { [schedule.messageId]: expect.stringContaining('eventNames.Schedule is false') }, sent: [purchaseFixture()] })
      })

      it('skips events with neither a hashed email nor the IP + user agent pair Pinterest requires', () => {
        const bare: ConversionEvent = { ...registrationFixture(), identity: { phoneDigits: HASHED_PERSON.phoneDigits } }
        expect(pinterest.skipReason!(bare, resolved)).toMatch(/^no hashed email and not both IP address and user agent/)
        expect(pinterest.skipReason!({ ...bare, ip: '203.0.113.7' }, resolved)).toBeDefined()
        expect(pinterest.skipReason!({ ...bare, ip: '203.0.113.7', userAgent: 'Mozilla/5.0' }, resolved)).toBeUndefined()
        expect(pinterest.skipReason!(registrationFixture(), resolved)).toBeUndefined()
      })

      it('skips an event Pinterest cannot match, saying why; the rest go in one request and are sent', async () => {
        const nobody: ConversionEvent = { ...registrationFixture(new Date()), messageId: 'msg-nobody', identity: {} }
        const events = [leadFixture(new Date()), nobody, purchaseFixture(new Date())]
        const plan = planDelivery(pinterest, events, resolved)
        expect(plan.refused).toEqual({ 'msg-nobody': expect.stringMatching(/^no hashed email and not both IP address and user agent/) })
        expect(dataOf(JSON.parse(plan.request!.body)).map((e) => e.event_id)).toEqual(['msg-lead-0001', 'msg-purchase-0001'])
        const outcomes = pinterest.parseResponse(await send(plan.request!), plan.sent)
        expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent'])
      })

      it('leaves out identity values that are not SHA-256 digests instead of sending them', () => {
        const leaky = { ...leadFixture(), ip: '203.0.113.7', userAgent: 'Mozilla/5.0', identity: { email: 'john@contoso.com', phoneDigits: HASHED_PERSON.phoneDigits.toUpperCase() } }
        expect(one(leaky).user_data).toEqual({ client_ip_address: '203.0.113.7', client_user_agent: 'Mozilla/5.0' })
      })

      it('one event older than 7 days fails alone: 422 with per-event results → rejected quoting Pinterest, the others sent', async () => {
        const now = new Date()
        const old = { ...leadFixture(now), messageId: 'msg-old', occurredAt: new Date(now.getTime() - 8 * 86_400_000) }
        const events = [purchaseFixture(now), old, registrationFixture(now)]
        const response = await send(pinterest.toRequest(events, resolved))
        expect(response.status).toBe(422)
        expect(JSON.parse(response.body)).toMatchObject({ code: 953, details: { num_events_received: 3, num_events_processed: 2 } })
        const outcomes = pinterest.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['sent', 'rejected', 'sent'])
        expect(outcomes[1]).toMatchObject({ message: expect.stringContaining('Given timestamp is in the past') })
        expect(fake.events.slice(-2).map((e) => e.event_id)).toEqual(['msg-purchase-0001', 'msg-signup-0001'])
      })

      it('the fake refuses milliseconds in event_time, unhashed emails and event names outside the reference\'s list per event', async () => {
        const event = one(leadFixture(new Date()))
        const cases = [
          [{ ...event, event_name: 'schedule' }, 'Invalid event_name parameter: schedule'],
          [{ ...event, event_time: event.event_time * 1000 }, 'Given timestamp is in the future'],
          [{ ...event, user_data: { em: ['john@contoso.com'] } }, 'Invalid user_data.em parameter'],
        ] as const
        for (const [bad, text] of cases) {
          const response = await send({ ...pinterest.toRequest([], resolved), body: JSON.stringify({ data: [bad] }) })
          expect(response.status).toBe(422)
          expect(pinterest.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining(text) })
        }
      })
    })

    describe('pinterest: reading answers', () => {
      const events = [leadFixture(), registrationFixture()]
      const outcomes = (reply: Parameters<typeof toResponse>[0]) => pinterest.parseResponse(toResponse(reply), events)

      it('reads per-event failures in a 200 too, in order, with Pinterest\'s error message', () => {
        const body = { num_events_received: 2, num_events_processed: 1, events: [failed('Invalid event_name parameter: buy'), processed] }
        expect(outcomes({ status: 200, body })).toEqual([{ status: 'rejected', message: 'Pinterest did not process the event: Invalid event_name parameter: buy' }, { status: 'sent' }])
      })

      it('a 200 without per-event results, or not JSON, counts as sent; a 422 without details rejects every event', () => {
        expect(outcomes({ status: 200, body: { num_events_received: 2, num_events_processed: 2 } })).toEqual([{ status: 'sent' }, { status: 'sent' }])
        expect(outcomes({ status: 200, body: 'OK' })).toEqual([{ status: 'sent' }, { status: 'sent' }])
        expect(outcomes({ status: 422, body: { code: 953, message: 'The action could not be processed properly due to some or all data provided being invalid.' } })[1])
          .toMatchObject({ status: 'rejected', message: expect.stringContaining('Pinterest code 953 (HTTP 422)') })
      })

      it('classifies whole-request answers: 429 and 5xx retry, 400 and 501 reject, Retry-After as seconds or a date', () => {
        expect(outcomes(pinterestErrors.rateLimited())[0]).toEqual({ status: 'retry', message: 'Pinterest code 8 (HTTP 429): You have exceeded your rate limit. Try again later.' })
        expect(outcomes({ ...pinterestErrors.rampedDown(), headers: { 'Retry-After': 'Sat, 21 Nov 2026 07:01:30 GMT', 'Date': 'Sat, 21 Nov 2026 07:00:00 GMT' } })[0]).toMatchObject({ status: 'retry', retryAfterMs: 90_000 })
        expect(outcomes(pinterestErrors.invalidRequest('"data" must be a non-empty array of events.'))[0]).toEqual({ status: 'rejected', message: 'Pinterest code 4196 (HTTP 400): The request was invalid. "data" must be a non-empty array of events.' })
        expect(outcomes({ status: 501, body: '' })[0]).toMatchObject({ status: 'rejected', message: 'Pinterest answered HTTP 501 with an empty body' })
        expect(outcomes({ status: 500, body: '<html><h1>Internal Server Error</h1></html>' })[0]).toMatchObject({ status: 'retry', message: 'Pinterest answered HTTP 500: Internal Server Error' })
      })
    })

    describe('pinterest: batches, rate and partial failures', () => {
      it('declares 1,000 events a request and 83 requests/s (5,000 calls a minute per ad account)', () => {
        expect([pinterest.maxBatchSize, pinterest.maxRequestsPerSecond]).toEqual([1000, 83])
      })

      it('a batch of five with two stale events: 422 with a result per event; those two rejected, the three others sent once', async () => {
        const now = Date.now()
        const events = batchOf(5, new Date(now)).map((event, index) => (index === 1 || index === 3 ? { ...event, occurredAt: new Date(now - 8 * 86_400_000) } : event))
        const before = fake.events.length
        const response = await send(pinterest.toRequest(events, resolved))
        expect(response.status).toBe(422)
        expect(JSON.parse(response.body)).toMatchObject({ code: 953, details: { num_events_received: 5, num_events_processed: 3 } })
        const outcomes = pinterest.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['sent', 'rejected', 'sent', 'rejected', 'sent'])
        expect(outcomes[3]).toMatchObject({ message: expect.stringContaining('Given timestamp is in the past') })
        expect(fake.events.slice(before).map((e) => e.event_id)).toEqual(['msg-batch-0000', 'msg-batch-0002', 'msg-batch-0004'])
      })
    })

    describe('pinterest: documented answers of events/create', () => {
      // The responses of events/create in Pinterest's v5 OpenAPI (https://github.com/pinterest/api-description,
      // v5/openapi.yaml, read 2026-11-26 through the clients generated from it): 200 ConversionApiResponse, 400 "The
      // request was invalid.", 401 "Not authorized to send conversion events", 403 "Unauthorized access.", 422 "Not all
      // events were successfully processed." (DetailedError), 429 "This request exceeded a rate limit…", 503 "The
      // endpoint has been ramped down and is currently not accepting any traffic.", default Error { code, message }.
      const cases: [string, Parameters<typeof toResponse>[0], 'retry' | 'rejected'][] = [
        ['400 invalid request', pinterestErrors.invalidRequest('"data" must be a non-empty array of events.'), 'rejected'],
        ['401 not authorized', pinterestErrors.authenticationFailed(), 'rejected'],
        ['403 unauthorized access', pinterestErrors.notPermitted(), 'rejected'],
        ['422 without details', { status: 422, body: { code: 953, message: 'Not all events were successfully processed.' } }, 'rejected'],
        ['429 rate limit', pinterestErrors.rateLimited(), 'retry'],
        ['503 ramped down', pinterestErrors.rampedDown(), 'retry'],
      ]
      it.each(cases)('%s → %s, quoting Pinterest', (_name, reply, status) => {
        const [outcome] = pinterest.parseResponse(toResponse(reply), [leadFixture()])
        expect(outcome).toMatchObject({ status, message: expect.stringContaining((reply.body as { message: string }).message) })
      })
    })

    describe('pinterest: US privacy (Limited Data Processing)', () => {
      const sha = (value: string) => sha256Hex(value)

      it('a US state opt-out sends opt_out_type LDP with the hashed state and country; the fake processes it', async () => {
        const optedOut: ConversionEvent = { ...leadFixture(new Date()), limitedDataUse: { country: 'us', state: 'ca' } }
        const event = one(optedOut)
        expect(event.custom_data).toEqual({ opt_out_type: 'LDP' })
        expect(event.user_data).toMatchObject({ st: [sha('ca')], country: [sha('us')] })
        expect(event.opt_out).toBe(false)
        expect((await send(pinterest.toRequest([optedOut], resolved))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ custom_data: { opt_out_type: 'LDP' }, user_data: { st: [sha('ca')] } })
      })

      it('the person\'s own hashed address wins; a state alone is a US state; no opt-out sends no LDP', () => {
        const withAddress = one({ ...purchaseFixture(), limitedDataUse: { country: 'us', state: 'ny' } })
        expect(withAddress.user_data).toMatchObject({ st: [HASHED_PERSON.state], country: [HASHED_PERSON.country] })
        expect(withAddress.custom_data).toMatchObject({ opt_out_type: 'LDP', value: '129.85' })
        expect(one({ ...leadFixture(), limitedDataUse: { state: 'co' } }).user_data).toMatchObject({ st: [sha('co')], country: [sha('us')] })
        const unknown = one({ ...leadFixture(), limitedDataUse: {} })
        expect(unknown.custom_data).toEqual({ opt_out_type: 'LDP' })
        expect(Object.keys(unknown.user_data)).toEqual(['em'])
        expect(one(leadFixture())).not.toHaveProperty('custom_data')
      })
    })
  },
})

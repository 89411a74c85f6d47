import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import meta from '../../adapters/ads/meta/index.ts'
import type { MetaOptions } from '../../adapters/ads/meta/map.ts'
import { META_API_VERSION } from '../../adapters/ads/meta/version.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { planDelivery, testAdPlatform, toResponse } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { metaErrors, startFakeMeta } from '../fakes/meta.ts'
import { metaOracleTests } from './meta-oracles.ts'

const fake = await startFakeMeta()
afterAll(() => fake.close())

const options: MetaOptions = { pixelId: fake.pixelId, accessToken: fake.accessToken, baseUrl: fake.url }
const resolved = v.parse(meta.options, options)

interface ServerEvent { event_name: string, event_time: number, event_id: string, action_source: string, [key: string]: unknown }
const dataOf = (body: unknown) => (body as { data: ServerEvent[] }).data
const mapped = (events: ConversionEvent[], opts: MetaOptions = resolved) => JSON.parse(meta.toRequest(events, opts).body) as { data: ServerEvent[], test_event_code?: string }
const one = (event: ConversionEvent) => mapped([event]).data[0]!

testAdPlatform<MetaOptions>({
  adapter: meta,
  folder: 'meta',
  options,
  invalidOptions: [
    { accessToken: 'token' },
    { pixelId: '1234567890123456' },
    { pixelId: 'px-123', accessToken: 'token' },
    { pixelId: 1234567890123456, accessToken: 'token' },
    { pixelId: '123', accessToken: '  ' },
    { pixelId: '123', accessToken: 'token', baseUrl: 'graph.facebook.com' },
    { pixelId: '123', accessToken: 'token', baseUrl: 'ftp://graph.example.test' },
    { pixelId: '123', accessToken: 'token', testEventcode: 'TEST123' },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { events_received: events.length, messages: [], fbtrace_id: 'AOkTrace1' } }),
    auth: { ...metaErrors.invalidToken(), platformMessage: 'Invalid OAuth access token - Cannot parse access token' },
    rateLimit: { ...metaErrors.throttled(17), platformMessage: '(#17) User request limit reached' },
    serverError: { ...metaErrors.transient(), platformMessage: 'An unexpected error has occurred. Please retry your request later.' },
  },
  countEvents: (body) => dataOf(body).length,
  // Meta deduplicates on event_name + event_id (48 h, against the pixel too).
  dedupKeyIn: (body, event) => dataOf(body).some((e) => e.event_id === event.messageId && e.event_name === event.standardEvent),
  additionalTests: () => {
    metaOracleTests(resolved)

    describe('meta: what reaches the Graph API', () => {
      it('the fake accepts the whole mapped request, records it, and the answer parses as sent', async () => {
        const events = fixtureEvents(new Date())
        const response = await send(meta.toRequest(events, resolved))
        expect(response.status).toBe(200)
        expect(JSON.parse(response.body)).toMatchObject({ events_received: 3, messages: [] })
        expect(fake.events.slice(-3).map((e) => e.event_id)).toEqual(events.map((e) => e.messageId))
        expect(meta.parseResponse(response, events)).toEqual(events.map(() => ({ status: 'sent' })))
      })

      it('the fake takes a full batch of 1000 and refuses 1001 with Graph\'s invalid-parameter error', async () => {
        expect((await send(meta.toRequest(batchOf(1000, new Date()), resolved))).status).toBe(200)
        const tooMany = await send(meta.toRequest(batchOf(1001, new Date()), resolved))
        expect(tooMany.status).toBe(400)
        expect(JSON.parse(tooMany.body)).toMatchObject({ error: { code: 100, type: 'OAuthException' } })
      })

      it('sends the token as a Bearer header, never in the URL; a wrong token gets 401 code 190 → rejected', async () => {
        const request = meta.toRequest([purchaseFixture()], resolved)
        expect(request.headers.Authorization).toBe(`Bearer ${fake.accessToken}`)
        expect(request.url).toBe(`${fake.url}/${META_API_VERSION}/${fake.pixelId}/events`)
        const events = fixtureEvents(new Date())
        const response = await send(meta.toRequest(events, { ...resolved, accessToken: 'EAAWrongToken' }))
        expect(response.status).toBe(401)
        const [outcome] = meta.parseResponse(response, events)
        expect(outcome).toMatchObject({ status: 'rejected', message: expect.stringContaining('OAuthException 190') })
        expect(outcome).toMatchObject({ message: expect.stringContaining('generate a new system-user token') })
      })

      it('sends event_time in unix seconds and event_id = messageId', () => {
        const event = purchaseFixture()
        expect(one(event)).toMatchObject({ event_time: Math.floor(event.occurredAt.getTime() / 1000), event_id: event.messageId, event_name: 'Purchase' })
        expect(Number.isInteger(one(event).event_time)).toBe(true)
      })

      it('maps the channel to action_source; BOPIS is a website purchase picked up in store', () => {
        const source = (channel: ConversionEvent['channel']) => one({ ...purchaseFixture(), channel })
        expect(source('online')).toMatchObject({ action_source: 'website' })
        expect(source('in_store')).toMatchObject({ action_source: 'physical_store' })
        expect(source('phone')).toMatchObject({ action_source: 'phone_call' })
        expect(source('bopis')).toMatchObject({ action_source: 'website', custom_data: { delivery_category: 'in_store' } })
        expect(source('online').custom_data).not.toHaveProperty('delivery_category')
      })

      it('sends an online event without a page URL or user agent as system_generated, never an incomplete website event', async () => {
        const { pageUrl: _pageUrl, ...noPage } = purchaseFixture(new Date())
        const { userAgent: _userAgent, ...noAgent } = purchaseFixture(new Date())
        for (const event of [noPage, noAgent, { ...noPage, channel: 'bopis' } as const]) {
          expect(one(event)).toMatchObject({ action_source: 'system_generated' })
          expect((await send(meta.toRequest([event], resolved))).status).toBe(200)
        }
        expect(one(noPage)).not.toHaveProperty('event_source_url')
        expect(one(purchaseFixture())).toMatchObject({ action_source: 'website', event_source_url: purchaseFixture().pageUrl, user_data: { client_user_agent: purchaseFixture().userAgent } })
        expect(one({ ...noPage, channel: 'in_store' })).toMatchObject({ action_source: 'physical_store' })
      })

      it('the fake refuses a website event without event_source_url or client_user_agent, as Meta requires both', async () => {
        const good = one(purchaseFixture(new Date()))
        const { event_source_url: _url, ...noUrl } = good
        const { client_user_agent: _agent, ...userData } = good.user_data as Record<string, unknown>
        for (const [bad, missing] of [[noUrl, 'event_source_url'], [{ ...good, user_data: userData }, 'user_data.client_user_agent']] as const) {
          const response = await send({ ...meta.toRequest([], resolved), body: JSON.stringify({ data: [bad] }) })
          expect(response.status).toBe(400)
          expect(JSON.parse(response.body)).toMatchObject({ error: { code: 100, error_user_title: 'Missing Website Event Parameter', error_user_msg: expect.stringContaining(missing) } })
          expect(meta.parseResponse(response, [purchaseFixture()])[0]).toMatchObject({ status: 'rejected' })
        }
      })

      it('puts hashed identity under Meta\'s keys as arrays, and IP, browser, fbc and fbp in plain', () => {
        const event = purchaseFixture()
        expect(one(event).user_data).toEqual({
          em: [HASHED_PERSON.email], ph: [HASHED_PERSON.phoneDigits], fn: [HASHED_PERSON.firstName], ln: [HASHED_PERSON.lastName],
          ct: [HASHED_PERSON.city], st: [HASHED_PERSON.state], zp: [HASHED_PERSON.zip], country: [HASHED_PERSON.country],
          external_id: [HASHED_PERSON.externalId],
          client_ip_address: event.ip, client_user_agent: event.userAgent, fbc: event.clickIds.fbc, fbp: event.clickIds.fbp,
        })
      })

      it('maps value, currency, order and items to custom_data; a value without a currency is left out', () => {
        expect(one(purchaseFixture()).custom_data).toEqual({
          value: 129.85, currency: 'EUR', order_id: 'A-1001', content_type: 'product', num_items: 3,
          contents: [{ id: 'SHIRT-RED-M', quantity: 2, item_price: 39.95 }, { id: 'CAP-BLK', quantity: 1, item_price: 49.95 }],
        })
        const { currency: _currency, ...noCurrency } = purchaseFixture()
        expect(one(noCurrency).custom_data).not.toHaveProperty('value')
        expect(one(registrationFixture())).not.toHaveProperty('custom_data')
      })

      it('maps consent: adUserData denied → Limited Data Use located by Meta, adPersonalization denied → opt_out', async () => {
        const denied = { ...leadFixture(new Date()), consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const
        expect(one(denied)).toMatchObject({ data_processing_options: ['LDU'], data_processing_options_country: 0, data_processing_options_state: 0, opt_out: true })
        for (const state of ['granted', 'unknown'] as const) {
          const event = one({ ...leadFixture(), consent: { adUserData: state, adPersonalization: state } })
          expect(Object.keys(event).filter((key) => key.startsWith('data_processing') || key === 'opt_out')).toEqual([])
        }
        expect((await send(meta.toRequest([denied], resolved))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ data_processing_options: ['LDU'] })
      })

      it('adds test_event_code only when configured; the fake files those events under it', async () => {
        expect(mapped([leadFixture()])).not.toHaveProperty('test_event_code')
        const testing = { ...resolved, testEventCode: 'TEST40211' }
        expect(mapped([leadFixture()], testing).test_event_code).toBe('TEST40211')
        expect((await send(meta.toRequest([leadFixture(new Date())], testing))).status).toBe(200)
        expect(fake.batches.at(-1)).toMatchObject({ testEventCode: 'TEST40211' })
      })

      it('leaves out identity values that are not SHA-256 digests instead of sending them', () => {
        const leaky = { ...leadFixture(), identity: { email: 'marguerite.okonkwo@gmail.com', phoneDigits: HASHED_PERSON.phoneDigits.toUpperCase() } }
        expect(one(leaky).user_data).toEqual({ fbc: leaky.clickIds.fbc })
      })

      it('skips an event Meta cannot match, saying why; the rest go in one request and are sent', async () => {
        const nobody: ConversionEvent = { ...registrationFixture(new Date()), messageId: 'msg-nobody', identity: {} }
        const events = [leadFixture(new Date()), nobody, purchaseFixture(new Date())]
        const plan = planDelivery(meta, events, resolved)
        expect(plan.refused).toEqual({ 'msg-nobody': expect.stringContaining('no customer information') })
        expect(dataOf(JSON.parse(plan.request!.body)).map((e) => e.event_id)).toEqual(['msg-lead-0001', 'msg-purchase-0001'])
        const outcomes = meta.parseResponse(await send(plan.request!), plan.sent)
        expect(outcomes.map((o) => o.status)).toEqual(['sent', 'sent'])
        // Alone, it makes no request at all: Meta refuses an empty one.
        expect(planDelivery(meta, [nobody], resolved).request).toBeUndefined()
      })

      it('the fake refuses a hand-made request with a raw email; the answer is a rejection quoting Meta', async () => {
        const good = one(leadFixture(new Date()))
        const bad = { ...good, user_data: { em: ['marguerite.okonkwo@gmail.com'] } }
        const response = await send({ ...meta.toRequest([], resolved), body: JSON.stringify({ data: [bad] }) })
        expect(response.status).toBe(400)
        expect(JSON.parse(response.body)).toMatchObject({ error: { code: 100, error_user_title: 'Unhashed Customer Information' } })
        expect(meta.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('user_data.em must be SHA-256 hashed') })
      })

      it('the fake also takes Meta\'s documented form style: access_token in the query, data as a JSON string', async () => {
        const form = new URLSearchParams({ data: JSON.stringify([one(leadFixture(new Date()))]) })
        const response = await fetch(`${fake.url}/${META_API_VERSION}/${fake.pixelId}/events?access_token=${fake.accessToken}`, { method: 'POST', body: form })
        expect([response.status, await response.json()]).toMatchObject([200, { events_received: 1 }])
      })

      it('the fake refuses milliseconds in event_time and events older than 7 days', async () => {
        const event = one(leadFixture(new Date()))
        for (const [eventTime, title] of [[event.event_time * 1000, 'Event Timestamp In The Future'], [event.event_time - 8 * 86_400, 'Event Timestamp Too Old']] as const) {
          const response = await send({ ...meta.toRequest([], resolved), body: JSON.stringify({ data: [{ ...event, event_time: eventTime }] }) })
          expect(JSON.parse(response.body)).toMatchObject({ error: { code: 100, error_user_title: title } })
        }
      })
    })

    describe('meta: batches and US privacy', () => {
      it('declares 1,000 events a request and a safe 20 requests a second (Meta publishes no Conversions API rate)', () => {
        expect([meta.maxBatchSize, meta.maxRequestsPerSecond]).toEqual([1000, 20])
      })

      it('a batch with one bad event is refused as a whole: Meta records none of it, and every event gets the refusal', async () => {
        // Server Event Parameters: "If any event_time in data is greater than 7 days in the past, we return an error
        // for the entire request and process no events."
        const old = { ...leadFixture(new Date()), messageId: 'msg-old', occurredAt: new Date(Date.now() - 8 * 86_400_000) }
        const events = [purchaseFixture(new Date()), old, registrationFixture(new Date())]
        const before = fake.events.length
        const response = await send(meta.toRequest(events, resolved))
        expect(response.status).toBe(400)
        expect(fake.events.length).toBe(before)
        const outcomes = meta.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected'])
        expect(new Set(outcomes.map((o) => JSON.stringify(o))).size).toBe(1)
        expect(outcomes[0]).toMatchObject({ message: expect.stringContaining('Event Timestamp Too Old') })
      })

      it('limitedDataUse sends LDU with Meta\'s location codes: US 1 and California 1000 when known, else 0 to let Meta locate', async () => {
        const ldu = (where: ConversionEvent['limitedDataUse']) => one({ ...leadFixture(), limitedDataUse: where })
        const fields = (event: ServerEvent) => [event.data_processing_options, event.data_processing_options_country, event.data_processing_options_state]
        expect(fields(ldu({ country: 'us', state: 'ca' }))).toEqual([['LDU'], 1, 1000])
        expect(fields(ldu({ country: 'us', state: 'tx' }))).toEqual([['LDU'], 1, 0])
        expect(fields(ldu({ country: 'us' }))).toEqual([['LDU'], 1, 0])
        expect(fields(ldu({}))).toEqual([['LDU'], 0, 0])
        // Granted consent does not lift a US opt-out; without limitedDataUse nothing is added.
        expect(ldu({ country: 'us', state: 'ca' })).not.toHaveProperty('opt_out')
        expect(one(leadFixture())).not.toHaveProperty('data_processing_options')
        const located = { ...leadFixture(new Date()), messageId: 'msg-ldu-ca', limitedDataUse: { country: 'us', state: 'ca' } }
        expect((await send(meta.toRequest([located], resolved))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ event_id: 'msg-ldu-ca', data_processing_options: ['LDU'], data_processing_options_country: 1, data_processing_options_state: 1000 })
      })

      it('the fake refuses location codes Meta does not accept', async () => {
        const bad = { ...one(leadFixture(new Date())), data_processing_options: ['LDU'], data_processing_options_country: 1, data_processing_options_state: 6 }
        const response = await send({ ...meta.toRequest([], resolved), body: JSON.stringify({ data: [bad] }) })
        expect(response.status).toBe(400)
        expect(JSON.parse(response.body)).toMatchObject({ error: { code: 100, error_user_title: 'Invalid Data Processing Options' } })
      })
    })

    describe('meta: reading Graph answers', () => {
      const events = [leadFixture()]
      const outcome = (reply: Parameters<typeof toResponse>[0]) => meta.parseResponse(toResponse(reply), events)[0]

      it('classifies Graph error codes: throttling and transient errors retry, token, permission and parameter errors reject', () => {
        expect(outcome(metaErrors.throttled(4))).toMatchObject({ status: 'retry', message: expect.stringContaining('(#4) Application request limit reached') })
        expect(outcome(metaErrors.throttled(341))).toMatchObject({ status: 'retry' })
        expect(outcome(metaErrors.throttled(613))).toMatchObject({ status: 'retry' })
        // Business Use Case limits retry even without is_transient, and after the usage header's wait when given.
        const withoutTransient = (code: number) => {
          const reply = metaErrors.businessUseCaseLimit(code)
          const { is_transient: _, ...error } = (reply.body as { error: Record<string, unknown> }).error
          return { ...reply, body: { error } }
        }
        for (const code of [80000, 80004, 80014]) {
          expect(outcome(withoutTransient(code)), `code ${code}`).toMatchObject({ status: 'retry', message: expect.stringContaining(`(#${code})`) })
        }
        expect(outcome(withoutTransient(80015))).toMatchObject({ status: 'rejected' })
        expect(outcome({ status: 400, body: { error: { message: 'Temporarily blocked for policies violations', type: 'OAuthException', code: 368 } } })).toMatchObject({ status: 'retry' })
        expect(outcome({ status: 400, body: { error: { message: 'Odd hiccup', code: 100, is_transient: true } } })).toMatchObject({ status: 'retry' })
        expect(outcome({ status: 500, body: { error: { message: 'An unknown error occurred', type: 'OAuthException', code: 1 } } })).toMatchObject({ status: 'retry' })
        expect(outcome({ status: 403, body: { error: { message: '(#200) Permissions error', type: 'OAuthException', code: 200 } } }))
          .toMatchObject({ status: 'rejected', message: expect.stringContaining('ads_management') })
        expect(outcome(metaErrors.invalidParameter('Event Timestamp Too Old', 'The event is more than 7 days old.', 2804003)))
          .toMatchObject({ status: 'rejected', message: expect.stringMatching(/OAuthException 100\/2804003 \(HTTP 400\): Invalid parameter – Event Timestamp Too Old: The event is more than 7 days old\. \[fbtrace_id \w+\]/) })
        expect(outcome(metaErrors.unknownObject('999'))).toMatchObject({ status: 'rejected', message: expect.stringContaining("Object with ID '999' does not exist") })
      })

      // Graph API "Handling Errors" (https://developers.facebook.com/docs/graph-api/guides/error-handling) and "Rate
      // Limits" (https://developers.facebook.com/docs/graph-api/overview/rate-limiting): the error body is
      // { error: { message, type, code, error_subcode, error_user_title, error_user_msg, fbtrace_id } }.
      it('retries every throttling code Meta documents, with or without is_transient: 4, 17, 32, 341, 613 and 80000–80014', () => {
        const withoutTransient = (reply: ReturnType<typeof metaErrors.throttled>) => {
          const { is_transient: _, ...error } = (reply.body as { error: Record<string, unknown> }).error
          return { ...reply, body: { error } }
        }
        for (const code of [4, 17, 32, 341, 613] as const) {
          for (const reply of [metaErrors.throttled(code), withoutTransient(metaErrors.throttled(code))]) {
            expect(outcome(reply), `code ${code}`).toMatchObject({ status: 'retry', message: expect.stringContaining(`(#${code})`) })
          }
        }
        for (let code = 80000; code <= 80014; code++) {
          for (const reply of [metaErrors.businessUseCaseLimit(code), withoutTransient(metaErrors.businessUseCaseLimit(code))]) {
            expect(outcome(reply), `code ${code}`).toMatchObject({ status: 'retry', message: expect.stringContaining(`(#${code})`) })
          }
        }
      })

      it('rejects every documented permanent error, saying what to fix: token 102 and 190, permission 10 and 200–299, parameter 100', () => {
        const graph = (status: number, code: number, message: string) => ({ status, body: { error: { message, type: 'OAuthException', code, fbtrace_id: 'AFakeTrace' } } })
        expect(outcome(graph(400, 102, 'Session key invalid or no longer valid'))).toMatchObject({ status: 'rejected', message: expect.stringContaining('generate a new system-user token') })
        expect(outcome(metaErrors.invalidToken())).toMatchObject({ status: 'rejected', message: expect.stringContaining('generate a new system-user token') })
        for (const code of [10, 200, 270, 299]) {
          expect(outcome(graph(403, code, `(#${code}) Permission denied`)), `code ${code}`).toMatchObject({ status: 'rejected', message: expect.stringContaining('ads_management') })
        }
        expect(outcome(metaErrors.invalidParameter('Missing Website Event Parameter', 'event_source_url is required'))).toMatchObject({ status: 'rejected' })
      })

      it('classifies bare HTTP answers: 429 and 5xx retry, 501 rejects, a non-JSON 200 still counts as sent', () => {
        expect(outcome({ status: 429, body: '' })).toMatchObject({ status: 'retry', message: 'Meta answered HTTP 429 with an empty body' })
        expect(outcome({ status: 502, body: '<html><h1>502 Bad Gateway</h1></html>' })).toMatchObject({ status: 'retry', message: 'Meta answered HTTP 502: 502 Bad Gateway' })
        expect(outcome({ status: 501, body: { error: { message: 'Not implemented', code: 3 } } })).toMatchObject({ status: 'rejected' })
        expect(outcome({ status: 200, body: 'OK' })).toEqual({ status: 'sent' })
      })

      it('waits as long as Retry-After (seconds or a date) or the business-use-case estimate says', () => {
        const date = 'Sat, 21 Nov 2026 07:00:00 GMT'
        expect(outcome({ ...metaErrors.throttled(4), headers: { 'Retry-After': 'Sat, 21 Nov 2026 07:01:30 GMT', 'Date': date } })).toMatchObject({ retryAfterMs: 90_000 })
        const usage = JSON.stringify({ 1234: [{ type: 'ads_management', call_count: 100, estimated_time_to_regain_access: 12 }] })
        expect(outcome({ ...metaErrors.throttled(17), headers: { 'X-Business-Use-Case-Usage': usage } })).toMatchObject({ retryAfterMs: 720_000 })
        expect(outcome(metaErrors.throttled(17))).not.toHaveProperty('retryAfterMs')
      })
    })
  },
})

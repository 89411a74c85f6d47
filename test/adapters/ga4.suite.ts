import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import ga4 from '../../adapters/ads/ga4/index.ts'
import { clientIdOf, type Ga4Options } from '../../adapters/ads/ga4/map.ts'
import type { AdjustmentEvent, ConversionEvent } from '../../core/delivery/types.ts'
import { planDelivery, testAdPlatform } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { ga4Errors, startFakeGa4 } from '../fakes/ga4.ts'

const fake = await startFakeGa4()
afterAll(() => fake.close())

const options: Ga4Options = { measurementId: fake.measurementId, apiSecret: fake.apiSecret, baseUrl: fake.url }
const resolve = (extra: Record<string, unknown> = {}) => v.parse(ga4.options, { ...options, ...extra })
const resolved = resolve()

interface Ga4Event { name: string, timestamp_micros: number, params: Record<string, any> }
interface Ga4Body { client_id: string, user_id?: string, consent?: Record<string, string>, user_data?: Record<string, string[]>, events: Ga4Event[] }
const bodyOf = (events: ConversionEvent[], opts: Ga4Options = resolved) => JSON.parse(ga4.toRequest(events, opts).body) as Ga4Body
const one = (event: ConversionEvent, opts?: Ga4Options) => bodyOf([event], opts).events[0]!
const CLIENT_ID = '1197596843.1732780000'
const withGa = (event: ConversionEvent): ConversionEvent => ({ ...event, clickIds: { ...event.clickIds, ga: CLIENT_ID, ga_session: 'FAKE4TEST1.1732786400' } })

testAdPlatform<Ga4Options>({
  adapter: ga4,
  folder: 'ga4',
  options,
  invalidOptions: [
    { apiSecret: 'secret' },
    { measurementId: 'G-ABC123XYZ' },
    { measurementId: '1234567890', apiSecret: 'secret' },
    { measurementId: 'UA-12345-1', apiSecret: 'secret' },
    { measurementId: 'G-ABC123XYZ', apiSecret: '  ' },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', region: 'us' },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', validate: 'yes' },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', baseUrl: 'www.google-analytics.com' },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', apisecret: 'x' },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', events: { Schedule: 'session_start' } },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', events: { Schedule: '_booked' } },
    { measurementId: 'G-ABC123XYZ', apiSecret: 'secret', events: { Lead: 'lead form' } },
  ],
  replies: {
    success: () => ({ status: 204, body: '' }),
    partial: () => ({
      reply: { status: 200, body: { validationMessages: [{ fieldPath: 'events', description: 'Event at index: [1] has invalid name [_bad]. Names must start with an alphabetic character.', validationCode: 'NAME_INVALID' }] } },
      statuses: ['retry', 'rejected', 'retry'],
    }),
    auth: { ...ga4Errors.forbidden(), platformMessage: 'Your client does not have permission to get URL /mp/collect from this server.' },
    rateLimit: { ...ga4Errors.rateLimited(), platformMessage: 'Our systems have detected unusual traffic.' },
    serverError: { ...ga4Errors.unavailable(), platformMessage: 'The server is temporarily unable to service your request.' },
  },
  countEvents: (body) => (body as Ga4Body).events.length,
  // GA4 deduplicates purchases on transaction_id; every event carries the messageId there.
  dedupKeyIn: (body, event) => (body as Ga4Body).events.some((e) => e.params.transaction_id === event.messageId),
  additionalTests: () => {
    describe('ga4: what reaches the Measurement Protocol', () => {
      it('a Purchase with a _ga cookie on the visit reaches /mp/collect as a valid purchase for that client_id', async () => {
        const purchase = withGa(purchaseFixture(new Date()))
        const request = ga4.toRequest([purchase], resolved)
        expect(request.url).toBe(`${fake.url}/mp/collect?measurement_id=${fake.measurementId}&api_secret=${fake.apiSecret}`)
        const response = await send(request)
        expect([response.status, response.body]).toEqual([204, ''])
        expect(ga4.parseResponse(response, [purchase])).toEqual([{ status: 'sent' }])
        expect(fake.events.at(-1)).toMatchObject({
          client_id: CLIENT_ID, name: 'purchase', timestamp_micros: purchase.occurredAt.getTime() * 1000,
          params: { transaction_id: 'msg-purchase-0001', value: 129.85, currency: 'EUR', session_id: '1732786400', items: [{ item_id: 'SHIRT-RED-M', quantity: 2, price: 39.95 }, { item_id: 'CAP-BLK' }] },
        })
      })

      it('with validate: true the same goes to /debug/mp/collect, is valid, and nothing is collected', async () => {
        const purchase = withGa(purchaseFixture(new Date()))
        const before = fake.collected.length
        const request = ga4.toRequest([purchase], resolve({ validate: true }))
        expect(new URL(request.url).pathname).toBe('/debug/mp/collect')
        const response = await send(request)
        expect([response.status, JSON.parse(response.body)]).toEqual([200, { validationMessages: [] }])
        expect(ga4.parseResponse(response, [purchase])).toEqual([{ status: 'sent' }])
        expect(fake.validated.at(-1)).toMatchObject({ messages: [], body: { client_id: CLIENT_ID, events: [{ name: 'purchase' }] } })
        expect(fake.collected.length).toBe(before)
      })

      it('validation messages become refusals quoting Google: a stale event is rejected, the others retried', async () => {
        const stale = { ...withGa(leadFixture(new Date())), messageId: 'msg-stale', occurredAt: new Date(Date.now() - 80 * 3_600_000) }
        const events = [withGa(purchaseFixture(new Date())), stale, withGa(registrationFixture(new Date()))]
        const response = await send(ga4.toRequest(events, resolve({ validate: true })))
        const outcomes = ga4.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['retry', 'rejected', 'retry'])
        expect(outcomes[1]).toMatchObject({ message: expect.stringContaining('VALUE_OUT_OF_BOUNDS at events[1].timestamp_micros') })
        const noClient = await send({ ...ga4.toRequest(events, resolve({ validate: true })), body: JSON.stringify({ events: [{ name: 'purchase' }] }) })
        expect(ga4.parseResponse(noClient, events).every((o) => o.status === 'rejected' && o.message.includes('Measurement requires a client_id'))).toBe(true)
      })

      it('/mp/collect answers 204 even to malformed data and a wrong secret, which is why validate exists', async () => {
        const before = fake.collected.length
        const wrong = await send(ga4.toRequest([withGa(purchaseFixture(new Date()))], { ...resolved, apiSecret: 'revoked' }))
        const malformed = await send({ ...ga4.toRequest([withGa(purchaseFixture(new Date()))], resolved), body: '{"events":[{"name":"_bad"}]}' })
        expect([wrong.status, malformed.status]).toEqual([204, 204])
        expect(fake.collected.length).toBe(before)
      })

      it('posts to region1.google-analytics.com for region eu, www otherwise', () => {
        const { baseUrl: _base, ...live } = resolved
        expect(ga4.toRequest([purchaseFixture()], live).url).toMatch(/^https:\/\/www\.google-analytics\.com\/mp\/collect\?/)
        expect(ga4.toRequest([purchaseFixture()], { ...live, region: 'eu' }).url).toMatch(/^https:\/\/region1\.google-analytics\.com\/mp\/collect\?/)
      })

      it('maps the standard events to recommended events, schedule as a custom one, and takes overrides', () => {
        expect([purchaseFixture(), leadFixture(), registrationFixture(), { ...leadFixture(), standardEvent: 'Schedule' as const }].map((e) => one(e).name))
          .toEqual(['purchase', 'generate_lead', 'sign_up', 'schedule'])
        const custom = resolve({ events: { Schedule: 'book_appointment', Lead: false } })
        expect(one({ ...leadFixture(), standardEvent: 'Schedule' }, custom).name).toBe('book_appointment')
        expect(ga4.skipReason!(leadFixture(), custom)).toMatch(/configured not to send Lead/)
      })

      it('sends user_id, consent and hashed user-provided data (Google email, E.164 phone); none of it when ad_user_data is denied', () => {
        const body = bodyOf([withGa(purchaseFixture())])
        expect(body).toMatchObject({
          client_id: CLIENT_ID, user_id: HASHED_PERSON.externalId,
          consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
          user_data: { sha256_email_address: [HASHED_PERSON.emailGoogle], sha256_phone_number: [HASHED_PERSON.phoneE164] },
        })
        const denied = bodyOf([{ ...withGa(purchaseFixture()), consent: { adUserData: 'denied', adPersonalization: 'granted' } }])
        expect(denied.consent).toEqual({ ad_user_data: 'DENIED', ad_personalization: 'GRANTED' })
        expect(denied).not.toHaveProperty('user_data')
        expect(bodyOf([registrationFixture()])).not.toHaveProperty('consent')
      })

      it('without _ga derives a stable client id from the external id or hashed email; without either the event is skipped', () => {
        const derived = clientIdOf(purchaseFixture())!
        expect(derived).toMatch(/^\d+\.\d+$/)
        expect(clientIdOf({ ...leadFixture(), messageId: 'other' })).toBe(clientIdOf(leadFixture()))
        expect(clientIdOf(purchaseFixture())).toBe(derived)
        expect(ga4.skipReason!({ ...purchaseFixture(), identity: {}, clickIds: {} }, resolved)).toMatch(/no _ga client id/)
        expect(ga4.skipReason!({ ...purchaseFixture(), identity: {}, clickIds: { ga: CLIENT_ID } }, resolved)).toBeUndefined()
        // A server conversion may give the cookie's value; anything not a client id is not used as one.
        expect(clientIdOf({ ...purchaseFixture(), clickIds: { ga: `GA1.1.${CLIENT_ID}` } })).toBe(CLIENT_ID)
        expect(clientIdOf({ ...purchaseFixture(), clickIds: { ga: 'garbage' } })).toBe(derived)
      })

      it('sends session_id only for the stream whose container the _ga_<container> cookie names', () => {
        expect(one(withGa(purchaseFixture())).params.session_id).toBe('1732786400')
        expect(one(withGa(purchaseFixture()), resolve({ measurementId: 'G-OTHER1234' })).params).not.toHaveProperty('session_id')
      })

      it('groups requests by browser and person: one client_id per request', () => {
        const a = withGa(purchaseFixture())
        const b = { ...withGa(purchaseFixture()), clickIds: { ga: '222.333' } }
        expect(ga4.requestGroup!(a, resolved)).toBe(ga4.requestGroup!({ ...a, messageId: 'x' }, resolved))
        expect(ga4.requestGroup!(a, resolved)).not.toBe(ga4.requestGroup!(b, resolved))
      })

      it('the fake takes 25 events and refuses 26 on the validation server', async () => {
        const full = batchOf(25, new Date()).map(withGa)
        expect(ga4.parseResponse(await send(ga4.toRequest(full, resolve({ validate: true }))), full).every((o) => o.status === 'sent')).toBe(true)
        const over = batchOf(26, new Date()).map(withGa)
        const outcomes = ga4.parseResponse(await send(ga4.toRequest(over, resolve({ validate: true }))), over)
        expect(outcomes.every((o) => o.status === 'rejected' && o.message.includes('exceeds the maximum of [25]'))).toBe(true)
      })

      it('a full refund goes as GA4\'s refund event for the conversion\'s transaction_id and client_id; a partial one is skipped', async () => {
        const conversion = withGa(purchaseFixture(new Date()))
        const refund: AdjustmentEvent = { conversion, adjustment: { type: 'retraction', refundId: 're_1', at: new Date() } }
        const request = ga4.adjustments!.toRequest([refund], resolved)
        expect(JSON.parse(request.body)).toMatchObject({ client_id: CLIENT_ID, events: [{ name: 'refund', params: { transaction_id: 'msg-purchase-0001', value: 129.85, currency: 'EUR' } }] })
        expect(ga4.adjustments!.parseResponse(await send(request), [refund])).toEqual([{ status: 'sent' }])
        expect(fake.events.at(-1)).toMatchObject({ name: 'refund', client_id: CLIENT_ID })
        const partial: AdjustmentEvent = { conversion, adjustment: { type: 'restatement', refundId: 're_2', at: new Date(), value: 50, currency: 'EUR' } }
        expect(ga4.adjustments!.skipReason!(partial, resolved)).toMatch(/partial refund/)
      })

      it('what skipReason lets through is collected by the fake', async () => {
        const events = [withGa(leadFixture(new Date())), withGa(registrationFixture(new Date()))]
        const plan = planDelivery(ga4, events, resolved)
        expect(plan.sent).toHaveLength(2)
        const before = fake.events.length
        await send(plan.request!)
        expect(fake.events.slice(before).map((e) => e.name)).toEqual(['generate_lead', 'sign_up'])
      })
    })
  },
})

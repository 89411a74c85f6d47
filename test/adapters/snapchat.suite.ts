import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import snapchat from '../../adapters/ads/snapchat/index.ts'
import type { SnapchatOptions } from '../../adapters/ads/snapchat/map.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { testAdPlatform } from '../contract/ad-platform.ts'
import { HASHED_PERSON, USER_AGENT, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { snapchatErrors, startFakeSnapchat } from '../fakes/snapchat.ts'

const fake = await startFakeSnapchat()
afterAll(() => fake.close())

const options: SnapchatOptions = { pixelId: fake.pixelId, accessToken: fake.accessToken, baseUrl: fake.url }
const resolve = (extra: Record<string, unknown> = {}) => v.parse(snapchat.options, { ...options, ...extra })
const resolved = resolve()

interface SnapEvent { event_name: string, event_time: number, event_id: string, action_source: string, user_data: Record<string, any>, custom_data: Record<string, any>, [key: string]: unknown }
const eventsOf = (body: unknown) => (body as { data: SnapEvent[] }).data
const one = (event: ConversionEvent, opts: SnapchatOptions = resolved) => eventsOf(JSON.parse(snapchat.toRequest([event], opts).body))[0]!
const withSnap = (event: ConversionEvent): ConversionEvent => ({ ...event, clickIds: { ...event.clickIds, ScCid: '9c1e8a52-6f0b-4d1a-b0e3-7f2c5d9a1e44', scid: '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13' } })

testAdPlatform<SnapchatOptions>({
  adapter: snapchat,
  folder: 'snapchat',
  options,
  invalidOptions: [
    { accessToken: 'token' },
    { pixelId: '1ec32188-754e-4be2-8e55-c949a984a39f' },
    { pixelId: '123456', accessToken: 'token' },
    { pixelId: '1ec32188-754e-4be2-8e55-c949a984a39f', accessToken: ' ' },
    { pixelId: '1ec32188-754e-4be2-8e55-c949a984a39f', accessToken: 'token', testmode: true },
    { pixelId: '1ec32188-754e-4be2-8e55-c949a984a39f', accessToken: 'token', events: { Lead: 'LEAD' } },
    { pixelId: '1ec32188-754e-4be2-8e55-c949a984a39f', accessToken: 'token', baseUrl: 'tr.snapchat.com' },
  ],
  replies: {
    success: () => ({ status: 200, body: { status: 'SUCCESS', reason: 'SUCCESS' } }),
    auth: { ...snapchatErrors.unauthorized(), platformMessage: 'Invalid access token for the given asset id' },
    rateLimit: { ...snapchatErrors.rateLimited(), platformMessage: 'Too many requests, please retry later' },
    serverError: { ...snapchatErrors.unavailable(), platformMessage: 'Service temporarily unavailable' },
  },
  countEvents: (body) => eventsOf(body).length,
  // Snap deduplicates a server event with the pixel's by event_id (the pixel's client_dedup_id).
  dedupKeyIn: (body, event) => eventsOf(body).some((e) => e.event_id === event.messageId),
  additionalTests: () => {
    describe('snapchat: what reaches the Conversions API', () => {
      it('a Purchase reaches the fake as a valid v3 event, and the answer parses as sent', async () => {
        const purchase = withSnap(purchaseFixture(new Date()))
        const request = snapchat.toRequest([purchase], resolved)
        expect(request.url).toBe(`${fake.url}/v3/${fake.pixelId}/events?access_token=${fake.accessToken}`)
        const response = await send(request)
        expect([response.status, JSON.parse(response.body)]).toEqual([200, { status: 'SUCCESS', reason: 'SUCCESS' }])
        expect(snapchat.parseResponse(response, [purchase])).toEqual([{ status: 'sent' }])
        expect(fake.events.at(-1)).toMatchObject({
          event_name: 'PURCHASE', event_id: 'msg-purchase-0001', action_source: 'WEB', event_time: Math.floor(purchase.occurredAt.getTime() / 1000),
          event_source_url: 'https://shop.example.com/checkout/thank-you',
          custom_data: { value: 129.85, currency: 'EUR', order_id: 'A-1001', num_items: 3 },
          user_data: { sc_click_id: '9c1e8a52-6f0b-4d1a-b0e3-7f2c5d9a1e44', sc_cookie1: '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13' },
        })
      })

      it('test mode posts to /events/validate; the fake checks and records nothing', async () => {
        const before = fake.events.length
        const request = snapchat.toRequest([withSnap(purchaseFixture(new Date()))], resolve({ testMode: true }))
        expect(new URL(request.url).pathname).toBe(`/v3/${fake.pixelId}/events/validate`)
        expect((await send(request)).status).toBe(200)
        expect(fake.events.length).toBe(before)
        expect(fake.validated.at(-1)).toMatchObject({ event_name: 'PURCHASE' })
      })

      it('hashes per Snap: email lower case, phone digits without +, names and address; IP and user agent raw', () => {
        expect(one(purchaseFixture()).user_data).toEqual({
          em: [HASHED_PERSON.email], ph: [HASHED_PERSON.phoneDigits], fn: [HASHED_PERSON.firstName], ln: [HASHED_PERSON.lastName],
          ct: [HASHED_PERSON.city], st: [HASHED_PERSON.state], zp: [HASHED_PERSON.zip], country: [HASHED_PERSON.country],
          external_id: HASHED_PERSON.externalId, client_ip_address: '203.0.113.7', client_user_agent: USER_AGENT,
        })
        const denied = one({ ...withSnap(purchaseFixture()), consent: { adUserData: 'denied', adPersonalization: 'granted' } }).user_data
        expect(Object.keys(denied).sort()).toEqual(['client_ip_address', 'client_user_agent', 'sc_click_id', 'sc_cookie1'])
      })

      it('action_source per channel: WEB with its page, OFFLINE in store, by phone, or online without a page', () => {
        expect(one(withSnap(purchaseFixture())).action_source).toBe('WEB')
        expect(one({ ...purchaseFixture(), channel: 'bopis' }).action_source).toBe('WEB')
        const store = one({ ...withSnap(purchaseFixture()), channel: 'in_store' })
        expect(store.action_source).toBe('OFFLINE')
        expect(store).not.toHaveProperty('event_source_url')
        expect(store.user_data).not.toHaveProperty('sc_click_id')
        expect(store.user_data).not.toHaveProperty('client_ip_address')
        expect(one({ ...purchaseFixture(), channel: 'phone' }).action_source).toBe('OFFLINE')
        const { pageUrl: _page, ...noPage } = purchaseFixture()
        expect(one(noPage).action_source).toBe('OFFLINE')
      })

      it('event names in Snap\'s words, overridable and switchable off', () => {
        expect([purchaseFixture(), leadFixture(), registrationFixture(), { ...leadFixture(), standardEvent: 'Schedule' as const }].map((e) => one(e).event_name))
          .toEqual(['PURCHASE', 'CUSTOM_EVENT_1', 'SIGN_UP', 'RESERVE'])
        const custom = resolve({ events: { Lead: 'SIGN_UP', Schedule: false } })
        expect(one(leadFixture(), custom).event_name).toBe('SIGN_UP')
        expect(snapchat.skipReason!({ ...leadFixture(), standardEvent: 'Schedule' }, custom)).toMatch(/configured not to send Schedule/)
      })

      it('the fake refuses Snap\'s documented cases with 400 INVALID, rejected quoting the reason', async () => {
        const stale = { ...withSnap(leadFixture(new Date())), occurredAt: new Date(Date.now() - 38 * 86_400_000) }
        const response = await send(snapchat.toRequest([stale], resolved))
        expect([response.status, JSON.parse(response.body)]).toEqual([400, { status: 'INVALID', reason: 'data[0]: timestamp invalid or out of range' }])
        expect(snapchat.parseResponse(response, [stale])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('INVALID: data[0]: timestamp invalid or out of range') })
        const wrongToken = await send(snapchat.toRequest([withSnap(leadFixture(new Date()))], { ...resolved, accessToken: 'revoked' }))
        expect(snapchat.parseResponse(wrongToken, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('generate a Conversions API token') })
      })

      it('the fake takes a full batch of 2000 and refuses 2001', async () => {
        expect((await send(snapchat.toRequest(batchOf(2000, new Date()), resolved))).status).toBe(200)
        expect((await send(snapchat.toRequest(batchOf(2001, new Date()), resolved))).status).toBe(400)
      })

      it('fixtures the fake takes whole', async () => {
        const events = fixtureEvents(new Date()).map(withSnap)
        expect(snapchat.parseResponse(await send(snapchat.toRequest(events, resolved)), events).every((o) => o.status === 'sent')).toBe(true)
      })
    })
  },
})

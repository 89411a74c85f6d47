import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import microsoftAds, { microsoftAdsOptions } from '../../adapters/ads/microsoft-ads/index.ts'
import { skipReason, type MicrosoftAdsOptions, type UetEvent, type UetRequestBody } from '../../adapters/ads/microsoft-ads/map.ts'
import { MICROSOFT_ADS_API_VERSION } from '../../adapters/ads/microsoft-ads/version.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import { hashIdentity } from '../../core/identity/hash.ts'
import { planDelivery, testAdPlatform, toResponse } from '../contract/ad-platform.ts'
import { HASHED_PERSON, batchOf, fixtureEvents, leadFixture, purchaseFixture, registrationFixture } from '../contract/fixtures.ts'
import { send } from '../fakes/helpers.ts'
import { microsoftErrors, startFakeMicrosoftAds } from '../fakes/microsoft-ads.ts'

const fake = await startFakeMicrosoftAds()
afterAll(() => fake.close())

const options: MicrosoftAdsOptions = v.parse(microsoftAdsOptions, { tagId: fake.tagId, apiToken: fake.apiToken, baseUrl: fake.url })
const withOptions = (overrides: Record<string, unknown>) => v.parse(microsoftAdsOptions, { tagId: fake.tagId, apiToken: fake.apiToken, baseUrl: fake.url, ...overrides })

const dataOf = (body: unknown) => (body as UetRequestBody).data
const mapped = (events: ConversionEvent[], opts: MicrosoftAdsOptions = options) => JSON.parse(microsoftAds.toRequest(events, opts).body) as UetRequestBody
const one = (event: ConversionEvent, opts?: MicrosoftAdsOptions): UetEvent => mapped([event], opts).data[0]!
const goalName = (event: ConversionEvent) => (options.events[event.standardEvent] || undefined)?.eventName
const MSCLKID = '2a9e8a5ae2d71b5a1c4b1a1e0b1a1e1c'
const DAY_MS = 86_400_000
const UETVID = '839d8b10dcb111ee9d98ad5bcaa80a53'
/** An event Microsoft refuses: its currency is no ISO 4217 code. */
const badCurrency = (event: ConversionEvent): ConversionEvent => ({ ...event, currency: 'EURO' })
/** A hand-made body under the adapter's URL and headers, to see what the fake makes of it. */
const sendBody = (body: unknown) => send({ ...microsoftAds.toRequest([], options), body: JSON.stringify(body) })

testAdPlatform<MicrosoftAdsOptions>({
  adapter: microsoftAds,
  folder: 'microsoft-ads',
  options,
  invalidOptions: [
    { apiToken: 'token' },
    { tagId: '187004321' },
    { tagId: 'UET-187004321', apiToken: 'token' },
    { tagId: '187004321', apiToken: '  ' },
    { tagId: '187004321', apiToken: 'token', baseUrl: 'capi.uet.microsoft.com' },
    { tagId: '187004321', apiToken: 'token', events: { purchase: 'purchase' } },
    { tagId: '187004321', apiToken: 'token', events: { Lead: '' } },
    { tagId: '187004321', apiToken: 'token', testEventCode: 'TEST123' },
  ],
  replies: {
    success: (events) => ({ status: 200, body: { eventsReceived: events.length } }),
    partial: (events) => ({
      reply: microsoftErrors.validation([
        { index: 0, propertyName: 'data[0].userData.ph', attemptedValue: '+442079460958', errorMessage: "'ph' must be a valid SHA256 string.", errorCode: 'InvalidSha256', isWarning: true },
        { index: 1, propertyName: 'data[1].referrerUrl', attemptedValue: 'shop', errorMessage: "'referrerUrl' must be a valid URL.", errorCode: 'InvalidUrl', isWarning: false },
      ], events.length - 1),
      statuses: ['sent', 'rejected', 'sent'],
    }),
    auth: { ...microsoftErrors.unauthorized(), platformMessage: 'You are not authorized to access this resource.' },
    rateLimit: { ...microsoftErrors.throttled(), platformMessage: 'Rate limit exceeded. Retry the request later.' },
    serverError: { ...microsoftErrors.serverError(), platformMessage: 'An internal error occurred.' },
  },
  countEvents: (body) => dataOf(body).length,
  // Microsoft deduplicates on eventId + eventName, against the browser UET tag's event_id too.
  dedupKeyIn: (body, event) => dataOf(body).some((e) => e.eventId === event.messageId && e.eventName === goalName(event)),
  additionalTests: () => {
    describe('microsoft_ads: what reaches the UET Conversions API', () => {
      it('the fake processes the whole mapped request and the answer parses as sent', async () => {
        const events = fixtureEvents(new Date())
        const response = await send(microsoftAds.toRequest(events, options))
        expect([response.status, JSON.parse(response.body)]).toEqual([200, { eventsReceived: 3 }])
        expect(fake.batches.at(-1)).toMatchObject({ tagId: fake.tagId, continueOnValidationError: true, dataProvider: 'dcgate' })
        expect(fake.events.slice(-3).map((e) => [e.eventId, e.eventName, e.eventType])).toEqual([
          ['msg-purchase-0001', 'purchase', 'custom'], ['msg-lead-0001', 'submit_lead_form', 'custom'], ['msg-signup-0001', 'sign_up', 'custom'],
        ])
        expect(microsoftAds.parseResponse(response, events)).toEqual(events.map(() => ({ status: 'sent' })))
      })

      it('the fake takes a full batch of 1000 and refuses 1001 with a ValidationError, which rejects every event', async () => {
        expect((await send(microsoftAds.toRequest(batchOf(1000, new Date()), options))).status).toBe(200)
        const events = batchOf(1001, new Date())
        const tooMany = await send(microsoftAds.toRequest(events, options))
        expect(tooMany.status).toBe(400)
        const outcomes = microsoftAds.parseResponse(tooMany, events)
        expect(new Set(outcomes.map((o) => o.status))).toEqual(new Set(['rejected']))
        expect(outcomes[0]).toMatchObject({ message: expect.stringContaining("'data' must not contain more than 1000 events") })
      })

      it('posts to /v1/{tagId}/events with the token as a Bearer header; a wrong token or tag gets 401 → rejected with what to fix', async () => {
        const request = microsoftAds.toRequest([purchaseFixture()], options)
        expect(request).toMatchObject({ method: 'POST', url: `${fake.url}/${MICROSOFT_ADS_API_VERSION}/${fake.tagId}/events`, headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${fake.apiToken}` } })
        expect(request.url).not.toContain(fake.apiToken)
        const events = [leadFixture(new Date())]
        for (const wrong of [{ apiToken: 'stale-token' }, { tagId: '187000000' }]) {
          const response = await send(microsoftAds.toRequest(events, withOptions(wrong)))
          expect(response.status).toBe(401)
          expect(microsoftAds.parseResponse(response, events)[0]).toEqual({
            status: 'rejected',
            message: expect.stringMatching(/^Microsoft UET CAPI Unauthorized \(HTTP 401\): You are not authorized to access this resource\. Check apiToken and tagId: .*Use Conversions API/),
          })
        }
      })

      it('sends em and ph hashed per Microsoft\'s rule: the guide\'s vectors, dots and +alias removed from any address', () => {
        const identity = hashIdentity({ email: ' J.O.H.N+newsletter@Contoso.com ', phone: '+1 (425) 555-1234' })
        const { userData } = one({ ...leadFixture(), identity })
        expect(userData).toMatchObject({
          em: 'ec81f3ac7b2b19675bab9d54cf416f9f18cff87c97da5cca82c0f0891bc40602', // john@contoso.com
          ph: 'c59475d96e9f01d7d18d06cfad84dd02333207f02c0c2c5663ef2782cda0390e', // +14255551234
        })
        expect(one(purchaseFixture()).userData).toEqual({
          em: HASHED_PERSON.emailMicrosoft, ph: HASHED_PERSON.phoneE164, externalId: HASHED_PERSON.externalId,
          clientIpAddress: '203.0.113.7', clientUserAgent: purchaseFixture().userAgent,
        })
      })

      it('leaves out identity values that are not SHA-256 digests; the fake drops such a hash with a warning and still counts the event', async () => {
        const leaky = { ...leadFixture(new Date()), identity: { emailMicrosoft: 'john@contoso.com', phoneE164: HASHED_PERSON.phoneE164.toUpperCase() }, clickIds: { msclkid: MSCLKID } }
        expect(one(leaky).userData).toEqual({ msclkid: MSCLKID })
        const event = { ...one(leadFixture(new Date())), userData: { em: 'john@contoso.com', msclkid: MSCLKID } }
        const response = await sendBody({ data: [event], continueOnValidationError: true })
        expect(JSON.parse(response.body)).toMatchObject({ eventsReceived: 1, error: { details: [{ propertyName: 'data[0].userData.em', errorCode: 'InvalidSha256', isWarning: true }] } })
        expect(fake.events.at(-1)!.userData).toEqual({ msclkid: MSCLKID })
        expect(microsoftAds.parseResponse(response, [leadFixture()])).toEqual([{ status: 'sent' }])
      })

      it('sends eventTime in whole unix seconds and eventId = messageId; the fake refuses milliseconds', async () => {
        const event = purchaseFixture()
        expect(one(event)).toMatchObject({ eventTime: Math.floor(event.occurredAt.getTime() / 1000), eventId: event.messageId })
        expect(Number.isInteger(one({ ...event, occurredAt: new Date('2026-03-02T08:00:00.999Z') }).eventTime)).toBe(true)
        const live = one(leadFixture(new Date()))
        const response = await sendBody({ data: [{ ...live, eventTime: live.eventTime * 1000 }], continueOnValidationError: true })
        expect(response.status).toBe(400)
        expect(microsoftAds.parseResponse(response, [leadFixture()])[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining("data[0].eventTime: 'eventTime' must not be in the future. (InvalidEventTime)") })
      })

      it('puts msclkid in userData as Microsoft appended it, without the _uet prefix of the UET cookie', async () => {
        expect(one({ ...leadFixture(), clickIds: { msclkid: MSCLKID } }).userData.msclkid).toBe(MSCLKID)
        expect(one({ ...leadFixture(), clickIds: { msclkid: `_uet${MSCLKID}` } }).userData.msclkid).toBe(MSCLKID)
        const clickOnly: ConversionEvent = { ...registrationFixture(new Date()), identity: {}, clickIds: { msclkid: MSCLKID } }
        expect((await send(microsoftAds.toRequest([clickOnly], options))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ userData: { msclkid: MSCLKID } })
      })

      it('maps revenue, order, items and the page; Purchase carries the retail purchase fields', () => {
        expect(one(purchaseFixture())).toMatchObject({
          eventSourceUrl: 'https://shop.example.com/checkout/thank-you',
          customData: {
            value: 129.85, currency: 'EUR', transactionId: 'A-1001', pageType: 'purchase', ecommTotalValue: 129.85, itemIds: ['SHIRT-RED-M', 'CAP-BLK'],
            items: [{ id: 'SHIRT-RED-M', quantity: 2, price: 39.95, name: 'Red shirt' }, { id: 'CAP-BLK', quantity: 1, price: 49.95, name: 'Black cap' }],
          },
        })
        const { currency: _, ...noCurrency } = purchaseFixture()
        expect(one(noCurrency).customData).toMatchObject({ value: 129.85 })
        expect(one(noCurrency).customData).not.toHaveProperty('currency')
        expect(one(registrationFixture())).not.toHaveProperty('customData')
        expect(one({ ...purchaseFixture(), pageUrl: 'android-app://com.example/checkout' })).not.toHaveProperty('eventSourceUrl')
      })

      it('maps ad user data to adStorageConsent: denied → D without hashed identifiers, granted → G, unknown → left to Microsoft\'s default', async () => {
        const denied = { ...purchaseFixture(new Date()), clickIds: { msclkid: MSCLKID }, consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const
        expect(one(denied)).toMatchObject({ adStorageConsent: 'D', userData: { msclkid: MSCLKID, clientIpAddress: '203.0.113.7' } })
        for (const key of ['em', 'ph', 'externalId']) expect(one(denied).userData).not.toHaveProperty(key)
        expect(one({ ...denied, consent: { adUserData: 'denied', adPersonalization: 'granted' } }).adStorageConsent).toBe('D')
        expect(one(leadFixture()).adStorageConsent).toBe('G')
        expect(one(registrationFixture())).not.toHaveProperty('adStorageConsent')
        expect((await send(microsoftAds.toRequest([denied], options))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ adStorageConsent: 'D' })
      })

      it('does not send D when only ad personalization is denied: D would also take the event out of attribution, which the person allowed', async () => {
        const noRemarketing = { ...leadFixture(new Date()), messageId: 'msg-no-personalization', consent: { adUserData: 'granted', adPersonalization: 'denied' } } as const
        expect(one(noRemarketing)).toMatchObject({ adStorageConsent: 'G', userData: { em: HASHED_PERSON.emailMicrosoft } })
        expect(one({ ...noRemarketing, consent: { adUserData: 'unknown', adPersonalization: 'denied' } })).not.toHaveProperty('adStorageConsent')
        expect((await send(microsoftAds.toRequest([noRemarketing], options))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ eventId: 'msg-no-personalization', adStorageConsent: 'G' })
      })

      it('sends the UET visitor id as userData.anonymousId, as kept; never alone as what the conversion is matched on', async () => {
        const visitor = { ...leadFixture(new Date()), messageId: 'msg-uetvid', clickIds: { msclkid: MSCLKID, uetvid: UETVID } }
        expect(one(visitor).userData).toMatchObject({ anonymousId: UETVID, msclkid: MSCLKID })
        expect(one(leadFixture()).userData).not.toHaveProperty('anonymousId')
        expect(one({ ...leadFixture(), clickIds: { uetvid: '  ' } }).userData).not.toHaveProperty('anonymousId')
        expect((await send(microsoftAds.toRequest([visitor], options))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ eventId: 'msg-uetvid', userData: { anonymousId: UETVID } })
        // The guide: "vid alone is not sufficient" for a conversion.
        const onlyVisitor = { ...leadFixture(), identity: {}, clickIds: { uetvid: UETVID } }
        expect(skipReason(onlyVisitor, options)).toBe('no msclkid, hashed email, hashed phone or external id for Microsoft to match the conversion to')
      })

      it('has no test mode: the request carries no test flag and the options refuse one', () => {
        expect(Object.keys(mapped([leadFixture()]))).toEqual(['data', 'continueOnValidationError', 'dataProvider'])
        const result = v.safeParse(microsoftAdsOptions, { tagId: '1', apiToken: 'token', testMode: true })
        expect(result.issues?.[0]?.message).toContain('the UET Conversions API has no test mode')
      })

      it('lets a site name its own goal events, with category and label, and turn a standard event off', async () => {
        const custom = withOptions({ events: { Lead: 'qualified_lead', Schedule: { eventName: 'book', eventCategory: 'calendar', eventLabel: 'demo' }, CompleteRegistration: false } })
        expect(custom.events).toEqual({ Purchase: { eventName: 'purchase' }, Lead: { eventName: 'qualified_lead' }, CompleteRegistration: false, Schedule: { eventName: 'book', eventCategory: 'calendar', eventLabel: 'demo' } })
        expect(one(leadFixture(), custom).eventName).toBe('qualified_lead')
        const schedule = { ...leadFixture(new Date()), messageId: 'msg-schedule-1', standardEvent: 'Schedule' } as const
        expect(one(schedule, custom)).toMatchObject({ eventName: 'book', customData: { eventCategory: 'calendar', eventLabel: 'demo' } })
        expect((await send(microsoftAds.toRequest([schedule], custom))).status).toBe(200)
        expect(skipReason(registrationFixture(), custom)).toBe('CompleteRegistration is turned off for Microsoft Advertising (events.CompleteRegistration is false)')
        const plan = planDelivery(microsoftAds, [leadFixture(new Date()), registrationFixture(new Date())], custom)
        expect(plan.refused).toEqual({ 'msg-signup-0001': expect.stringContaining('CompleteRegistration is turned off') })
        expect(dataOf(JSON.parse(plan.request!.body)).map((e) => e.eventId)).toEqual(['msg-lead-0001'])
      })

      it('has no event-age window, since Microsoft documents none: a 30-day-old conversion is sent and the fake takes it', async () => {
        expect(microsoftAds.maxEventAgeDays).toBeUndefined()
        const old = { ...leadFixture(new Date()), messageId: 'msg-30-days', occurredAt: new Date(Date.now() - 30 * DAY_MS) }
        expect(skipReason(old, options)).toBeUndefined()
        const response = await send(microsoftAds.toRequest([old], options))
        expect(microsoftAds.parseResponse(response, [old])).toEqual([{ status: 'sent' }])
        expect(fake.events.at(-1)).toMatchObject({ eventId: 'msg-30-days', eventTime: Math.floor(old.occurredAt.getTime() / 1000) })
      })

      it('skips events with nothing to match on, with the reason', () => {
        expect(skipReason(leadFixture(), options)).toBeUndefined()
        const nobody = { ...leadFixture(), identity: { email: HASHED_PERSON.email }, clickIds: { gclid: 'G' } }
        expect(skipReason(nobody, options)).toBe('no msclkid, hashed email, hashed phone or external id for Microsoft to match the conversion to')
        const withheld = { ...leadFixture(), consent: { adUserData: 'denied', adPersonalization: 'denied' } } as const
        expect(skipReason(withheld, options)).toMatch(/denied ad user data/)
        expect(skipReason({ ...withheld, clickIds: { msclkid: MSCLKID } }, options)).toBeUndefined()
      })

      it('gets Microsoft\'s per-event verdicts back on the right events: an invalid event is rejected, the rest are sent', async () => {
        const invalid = { ...badCurrency(leadFixture(new Date())), messageId: 'msg-bad-currency', value: 10 }
        const events = [purchaseFixture(new Date()), invalid, registrationFixture(new Date())]
        const response = await send(microsoftAds.toRequest(events, options))
        expect(response.status).toBe(200)
        expect(fake.events.slice(-2).map((e) => e.eventId)).toEqual(['msg-purchase-0001', 'msg-signup-0001'])
        const outcomes = microsoftAds.parseResponse(response, events)
        expect(outcomes.map((o) => o.status)).toEqual(['sent', 'rejected', 'sent'])
        expect(outcomes[1]).toMatchObject({ message: "Microsoft UET CAPI refused the event: data[1].customData.currency: 'currency' must be a 3-letter ISO 4217 code. (InvalidEnumValue)" })
      })
    })

    describe('microsoft_ads: batches and US privacy', () => {
      it('declares 1,000 events a request (the guide\'s batch maximum) and a safe 10 requests a second', () => {
        expect([microsoftAds.maxBatchSize, microsoftAds.maxRequestsPerSecond]).toEqual([1000, 10])
      })

      it('maps a partial failure in a batch of 25 back to its events: listed errors rejected, the unlisted retried until told apart', async () => {
        const bad = (i: number) => ({ ...badCurrency(purchaseFixture(new Date())), messageId: `msg-bad-${i}` })
        const fresh = (i: number) => ({ ...purchaseFixture(new Date()), messageId: `msg-fresh-${i}` })
        const events = Array.from({ length: 25 }, (_, i) => i % 2 === 0 && i < 24 ? bad(i) : fresh(i))
        const badIds = events.filter((e) => e.messageId.startsWith('msg-bad')).map((e) => e.messageId)
        expect(badIds).toHaveLength(12)
        const first = await send(microsoftAds.toRequest(events, options))
        expect(JSON.parse(first.body)).toMatchObject({ eventsReceived: 13 })
        const outcomes = microsoftAds.parseResponse(first, events)
        // Microsoft lists the first 10 errors: those 10 events are rejected; the 2 unlisted bad ones cannot be told
        // from the 13 processed, so all 15 are sent again (a processed one is deduplicated by its eventId).
        const byId = new Map(events.map((e, i) => [e.messageId, outcomes[i]!.status]))
        expect(badIds.slice(0, 10).map((id) => byId.get(id))).toEqual(Array(10).fill('rejected'))
        const again = events.filter((e) => byId.get(e.messageId) === 'retry')
        expect(again.map((e) => e.messageId)).toEqual(events.map((e) => e.messageId).filter((id) => !badIds.slice(0, 10).includes(id)))
        const second = microsoftAds.parseResponse(await send(microsoftAds.toRequest(again, options)), again)
        expect(again.filter((_, i) => second[i]!.status === 'rejected').map((e) => e.messageId)).toEqual(badIds.slice(10))
        expect(second.filter((o) => o.status === 'sent')).toHaveLength(13)
      })

      it('limitedDataUse sends adStorageConsent D (Microsoft then uses the event for no advertising purpose), whatever the consent', async () => {
        const limited = { ...leadFixture(new Date()), messageId: 'msg-ldu', limitedDataUse: { country: 'us', state: 'ca' } }
        expect(one(limited)).toMatchObject({ adStorageConsent: 'D', userData: { em: HASHED_PERSON.emailMicrosoft } })
        expect(one({ ...limited, consent: { adUserData: 'granted', adPersonalization: 'granted' } }).adStorageConsent).toBe('D')
        expect((await send(microsoftAds.toRequest([limited], options))).status).toBe(200)
        expect(fake.events.at(-1)).toMatchObject({ eventId: 'msg-ldu', adStorageConsent: 'D' })
      })

      it('reads the guide\'s own 400 example (several details on one event, no errorCode or isWarning): nothing was processed', () => {
        // https://learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration, "Errors": 400 ValidationError.
        const guide = { status: 400, body: { error: { code: 'ValidationError', message: 'One or multiple parameters did not pass validation checks, see details.', details: [
          { index: 0, propertyName: 'data[0].eventType', errorMessage: "'eventType' must be one of the following: pageLoad, custom." },
          { index: 0, propertyName: 'data[0].eventTime', errorMessage: "'eventTime' must not be empty." },
        ] } } }
        const events = [leadFixture(), purchaseFixture()]
        const [bad, other] = microsoftAds.parseResponse(toResponse(guide), events)
        expect(bad).toMatchObject({ status: 'rejected', message: expect.stringContaining("data[0].eventType: 'eventType' must be one of the following: pageLoad, custom.; data[0].eventTime: 'eventTime' must not be empty.") })
        expect(other).toEqual({ status: 'rejected', message: 'Microsoft UET CAPI ValidationError (HTTP 400): One or multiple parameters did not pass validation checks, see details.' })
      })
    })

    describe('microsoft_ads: reading Microsoft\'s answers', () => {
      const events = fixtureEvents()
      const outcomes = (reply: Parameters<typeof toResponse>[0]) => microsoftAds.parseResponse(toResponse(reply), events)

      it('a 400 processed nothing: events Microsoft names get their own errors, the others the request\'s', () => {
        const reply = microsoftErrors.validation([{ index: 2, propertyName: 'data[2].eventType', attemptedValue: 'conversion', errorMessage: "'eventType' must be one of the following: pageLoad, custom.", errorCode: 'InvalidEnumValue', isWarning: false }])
        const [first, , third] = outcomes(reply)
        expect(first).toEqual({ status: 'rejected', message: 'Microsoft UET CAPI ValidationError (HTTP 400): One or multiple parameters did not pass validation checks, see details.' })
        expect(third).toMatchObject({ status: 'rejected', message: expect.stringContaining("data[2].eventType: 'eventType' must be one of the following: pageLoad, custom. (InvalidEnumValue)") })
      })

      it('retries the events Microsoft did not process but could not name (it lists only 10 errors)', () => {
        const reply = microsoftErrors.validation([{ index: 0, propertyName: 'data[0].userData', errorMessage: "'userData' must contain at least one of: anonymousId, externalId, em, ph, msclkid, idfa, gaid.", errorCode: 'Empty', isWarning: false }], 1)
        expect(outcomes(reply).map((o) => o.status)).toEqual(['rejected', 'retry', 'retry'])
        expect(outcomes({ status: 200, body: { eventsReceived: 3 } }).map((o) => o.status)).toEqual(['sent', 'sent', 'sent'])
        expect(outcomes({ status: 200, body: '' }).map((o) => o.status)).toEqual(['sent', 'sent', 'sent'])
      })

      it('retries throttling after Retry-After (seconds or a date) and server errors; 403 and 501 reject', () => {
        expect(outcomes(microsoftErrors.throttled(30))[0]).toEqual({ status: 'retry', message: 'Microsoft UET CAPI TooManyRequests (HTTP 429): Rate limit exceeded. Retry the request later.', retryAfterMs: 30_000 })
        const dated = { ...microsoftErrors.throttled(), headers: { 'Retry-After': 'Mon, 02 Mar 2026 10:01:30 GMT', 'Date': 'Mon, 02 Mar 2026 10:00:00 GMT' } }
        expect(outcomes(dated)[0]).toMatchObject({ retryAfterMs: 90_000 })
        expect(outcomes({ ...microsoftErrors.serverError(), body: { error: { code: 'InternalServerError', message: 'Oops' }, traceId: 'b2f1c0de' } })[0]).toEqual({ status: 'retry', message: 'Microsoft UET CAPI InternalServerError (HTTP 500): Oops [traceId b2f1c0de]' })
        expect(outcomes({ status: 403, body: '' })[0]).toMatchObject({ status: 'rejected', message: expect.stringContaining('Check apiToken and tagId') })
        expect(outcomes({ status: 501, body: { error: { code: 'NotImplemented', message: 'Not implemented' } } })[0]).toMatchObject({ status: 'rejected' })
      })
    })
  },
})

/**
 * Google Ads refunds: restated through the Data Manager API's events:ingest by default, through the Google Ads API's
 * UploadConversionAdjustments when its credentials are configured: the mappings, the answers, round trips through the fake.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import googleAds, { googleAdsOptions, type GoogleAdsOptions } from '../../adapters/ads/google-ads/index.ts'
import type { UploadConversionAdjustmentsBody } from '../../adapters/ads/google-ads/map-adjustments.ts'
import type { IngestEventsBody } from '../../adapters/ads/google-ads/map.ts'
import { SCOPE_HINT } from '../../adapters/ads/google-ads/response.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { createRegistry } from '../../core/registry.ts'
import type { AdjustmentEvent, ConversionEvent } from '../../core/delivery/types.ts'
import type { AuthContext } from '../../core/registry.ts'
import { startFakeGoogleAds, SCOPES, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { send } from '../fakes/helpers.ts'

const adjustments = googleAds.adjustments!
const options = (overrides: Record<string, unknown> = {}): GoogleAdsOptions => v.parse(googleAdsOptions, {
  customerId: '123-456-7890', clientId: 'fake-client.apps.googleusercontent.com', clientSecret: 'GOCSPX-fake-secret',
  refreshToken: '1//fake-refresh-token', conversionActions: { Purchase: '111', Lead: '222' }, ...overrides,
})
const conversion = (overrides: Partial<ConversionEvent> = {}): ConversionEvent => ({
  messageId: 'order-1', siteId: 'demo', event: 'order_paid', standardEvent: 'Purchase', occurredAt: new Date('2026-11-20T09:08:07.654Z'),
  value: 100, currency: 'EUR', items: [], channel: 'online', identity: {}, clickIds: { gclid: 'Cj0KCQ-fake' },
  consent: { adUserData: 'granted', adPersonalization: 'granted' }, confirmation: 'payment_confirmed', ...overrides,
})
const item = (type: 'retraction' | 'restatement', overrides: Partial<AdjustmentEvent['adjustment']> = {}, of = conversion()): AdjustmentEvent => ({
  conversion: of, adjustment: { type, refundId: 'r1', at: new Date('2026-11-22T10:00:00Z'), ...(type === 'restatement' ? { value: 70, currency: 'EUR' } : {}), ...overrides },
})
/** A destination with the Google Ads API's credentials: refunds go through UploadConversionAdjustments. */
const adsApi = (overrides: Record<string, unknown> = {}) => options({ adjustments: { refreshToken: '1//adwords-refresh-token' }, ...overrides })
const bodyOf = (items: AdjustmentEvent[], opts = adsApi()) => JSON.parse(adjustments.toRequest(items, opts).body) as UploadConversionAdjustmentsBody
const ingestOf = (items: AdjustmentEvent[], opts = options()) => JSON.parse(adjustments.toRequest(items, opts).body) as IngestEventsBody
const reply = (payload: unknown) => ({ status: 200, headers: new Headers(), body: JSON.stringify(payload) })
const rowError = (index: number, name: string, message: string) => ({
  errorCode: { conversionAdjustmentUploadError: name }, message, location: { fieldPathElements: [{ fieldName: 'conversion_adjustments', index }, { fieldName: 'order_id' }] },
})
const partialFailure = (...errors: unknown[]) => ({ partialFailureError: { code: 3, message: 'partial failure', details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure', errors }] }, results: [] })

export function adjustmentTests(): void {
  describe('google_ads refunds by default (Data Manager API, events:ingest)', () => {
    it('restates the conversion through events:ingest: its own event again, with the value left, zero for a full refund', () => {
      const sale = conversion({ messageId: 'order-1', identity: { emailGoogle: 'a'.repeat(64) } })
      const request = adjustments.toRequest([item('retraction', {}, sale), item('restatement', {}, conversion({ messageId: 'order-2', standardEvent: 'Lead' }))], options())
      expect(request.url).toBe('https://datamanager.googleapis.com/v1/events:ingest')
      const body = JSON.parse(request.body) as IngestEventsBody
      const sent = JSON.parse(googleAds.toRequest([sale, conversion({ messageId: 'order-2', standardEvent: 'Lead' })], options()).body) as IngestEventsBody
      // The same destinations, transactionIds, timestamps and identifiers as the conversions were sent with.
      expect(body.destinations).toEqual(sent.destinations)
      expect(body.encoding).toBe('HEX')
      expect(body.events).toEqual([
        { ...sent.events[0], conversionValue: 0, currency: 'EUR' },
        { ...sent.events[1], conversionValue: 70, currency: 'EUR' },
      ])
    })

    it('a full refund of a conversion in another currency is restated to zero in the currency it was sold in', () => {
      const [event] = ingestOf([item('retraction', {}, conversion({ currency: 'USD' }))]).events
      expect(event).toMatchObject({ conversionValue: 0, currency: 'USD' })
    })

    it('uses the conversions\' own token and OAuth client: no developer token, no second credential', async () => {
      expect(adjustments.authorize).toBeDefined()
      expect(ingestOf([item('retraction')], options({ validateOnly: true })).validateOnly).toBe(true)
    })

    it('skips what Google could not restate, saying why: no value to restate, no identifier left, no action', () => {
      expect(adjustments.skipReason!(item('retraction', {}, conversion({ value: undefined, currency: undefined })), options()))
        .toBe('the conversion was sent without a value: the Data Manager API can only restate a value, and retracting the conversion needs the Google Ads API (google_ads.adjustments, README "Refunds")')
      expect(adjustments.skipReason!(item('retraction', {}, conversion({ clickIds: {}, identity: {} })), options()))
        .toBe('no gclid, gbraid or wbraid, and no hashed email or phone Google may use')
      expect(adjustments.skipReason!(item('retraction', {}, conversion({ standardEvent: 'Schedule' })), options())).toBe('no Google Ads conversion action is configured for Schedule')
      expect(adjustments.skipReason!(item('retraction'), options())).toBeUndefined()
    })

    it('reads the answer as for conversions: {requestId} is sent, a refused request is rejected in Google\'s words', () => {
      expect(adjustments.parseResponse(reply({ requestId: 'f8a1' }), [item('retraction')])).toEqual([{ status: 'sent' }])
      const refused = { status: 400, headers: new Headers(), body: JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'events[0].currency', reason: 'INVALID_CURRENCY_CODE', description: 'The currency code is not supported.' }] }] } }) }
      expect(adjustments.parseResponse(refused, [item('retraction')])).toEqual([{ status: 'rejected', message: 'INVALID_CURRENCY_CODE at events[0].currency: The currency code is not supported.' }])
    })
  })

  describe('google_ads refunds through the Google Ads API (adjustments configured)', () => {
    it('stops the start naming what is missing: an adjustments block without its refresh token', () => {
      const google_ads = { customerId: '123-456-7890', clientId: 'c', clientSecret: 's', refreshToken: '1//dm', conversionActions: { Purchase: '111' }, adjustments: {} }
      let error: unknown
      try {
        createRegistry([googleAds], resolveConfig({ sites: [{ id: 'shop', name: 'Shop', destinations: { google_ads } }] }, {}).sites)
      }
      catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(BootError)
      expect((error as BootError).details).toEqual([expect.stringMatching(/^sites\[0\]\.destinations\.google_ads\.adjustments\.refreshToken: is missing: refunds through the Google Ads API need a refresh token made with the https:\/\/www\.googleapis\.com\/auth\/adwords scope/)])
    })

    it('posts retractions and restatements to the Google Ads API, by the order id the conversion was sent under', () => {
      const request = adjustments.toRequest([item('retraction'), item('restatement', {}, conversion({ messageId: 'order-2' }))], adsApi())
      expect(request.url).toBe('https://googleads.googleapis.com/v26/customers/1234567890:uploadConversionAdjustments')
      expect(JSON.parse(request.body)).toEqual({
        partialFailure: true,
        conversionAdjustments: [
          { conversionAction: 'customers/1234567890/conversionActions/111', adjustmentType: 'RETRACTION', adjustmentDateTime: '2026-11-22 10:00:00+00:00', orderId: 'order-1' },
          { conversionAction: 'customers/1234567890/conversionActions/111', adjustmentType: 'RESTATEMENT', adjustmentDateTime: '2026-11-22 10:00:00+00:00', orderId: 'order-2', restatementValue: { adjustedValue: 70, currencyCode: 'EUR' } },
        ],
      })
    })

    it('a configured baseUrl serves the adjustments too; validateOnly is passed on', () => {
      const request = adjustments.toRequest([item('retraction')], adsApi({ baseUrl: 'http://127.0.0.1:9/google', validateOnly: true }))
      expect(request.url).toBe('http://127.0.0.1:9/google/v26/customers/1234567890:uploadConversionAdjustments')
      expect(JSON.parse(request.body).validateOnly).toBe(true)
    })

    it('moves a refund stamped at or before the sale to one second after it', () => {
      const [row] = bodyOf([item('retraction', { at: new Date('2026-11-20T09:00:00Z') })]).conversionAdjustments
      expect(row!.adjustmentDateTime).toBe('2026-11-20 09:08:08+00:00')
    })

    it('skips a refund Google cannot be told: no conversion action for the event, a restatement without a value, a sale over 54 days old', () => {
      expect(adjustments.skipReason!(item('retraction', {}, conversion({ standardEvent: 'Schedule' })), adsApi())).toBe('no Google Ads conversion action is configured for Schedule')
      expect(adjustments.skipReason!(item('restatement', { value: undefined }), adsApi())).toMatch(/cannot be restated/)
      expect(adjustments.skipReason!(item('retraction', { at: new Date('2027-01-20T00:00:00Z') }), adsApi()))
        .toBe('the conversion happened 60 days before the refund; the Google Ads API adjusts conversions at most 54 days old')
      expect(adjustments.skipReason!(item('retraction'), adsApi())).toBeUndefined()
      // A conversion without a value can be retracted there.
      expect(adjustments.skipReason!(item('retraction', {}, conversion({ value: undefined, currency: undefined })), adsApi())).toBeUndefined()
    })

    it('the legacy upload-clicks path takes refunds through the Google Ads API with its own (adwords) token', () => {
      const request = adjustments.toRequest([item('retraction')], options({ api: 'upload-clicks' }))
      expect(request.url).toBe('https://googleads.googleapis.com/v26/customers/1234567890:uploadConversionAdjustments')
    })

    it('reads row errors: already applied is sent, not found yet is retried in an hour, a refund before the sale is rejected', () => {
      const items = [item('retraction'), item('retraction'), item('retraction'), item('retraction')]
      const outcomes = adjustments.parseResponse(reply(partialFailure(
        rowError(1, 'CONVERSION_ALREADY_RETRACTED', 'The conversion was already retracted. This adjustment was not processed.'),
        rowError(2, 'CONVERSION_NOT_FOUND', 'The conversion for this conversion action and conversion identifier can\'t be found.'),
        rowError(3, 'ADJUSTMENT_PRECEDES_CONVERSION', 'Adjustment has an adjustment_date_time that occurred before the associated conversion.'),
      )), items)
      expect(outcomes).toEqual([
        { status: 'sent' },
        { status: 'sent' },
        { status: 'retry', message: expect.stringContaining('CONVERSION_NOT_FOUND'), retryAfterMs: 3_600_000 },
        { status: 'rejected', message: expect.stringContaining('ADJUSTMENT_PRECEDES_CONVERSION') },
      ])
    })

    describe('against the fake Google', () => {
      let google: FakeGoogleAds
      let dataManagerOnly: FakeGoogleAds
      const cache = new Map<string, string>()
      const ctx: AuthContext = { fetch, cache: { get: async (k) => cache.get(k) ?? null, set: async (k, value) => void cache.set(k, value) }, get signal() { return AbortSignal.timeout(10_000) } } // a fresh timeout per call: one made at collection time runs out on a slow machine
      beforeAll(async () => {
        [google, dataManagerOnly] = await Promise.all([startFakeGoogleAds(), startFakeGoogleAds({ scopes: [SCOPES.dataManager], refreshToken: '1//data-manager-only' })])
      })
      afterAll(async () => {
        await Promise.all([google?.close(), dataManagerOnly?.close()])
      })
      const opts = () => options({ baseUrl: google.url, oauthUrl: google.oauthUrl, adjustments: { refreshToken: google.credentials.refreshToken } })
      const deliver = async (items: AdjustmentEvent[]) => adjustments.parseResponse(await send(adjustments.toRequest(items, opts()), await adjustments.authorize!(opts(), ctx)), items)

      it('retracts a conversion sent through the Data Manager API; an unknown order is CONVERSION_NOT_FOUND; a second retraction counts as done', async () => {
        const sale = conversion({ messageId: 'dm-1', occurredAt: new Date(Date.now() - 3_600_000) })
        const sent = await send(googleAds.toRequest([sale], opts()), await googleAds.authorize!(opts(), ctx))
        expect(googleAds.parseResponse(sent, [sale])).toEqual([{ status: 'sent' }])
        const now = new Date()
        const outcomes = await deliver([item('retraction', { at: now }, sale), item('retraction', { at: now }, conversion({ messageId: 'never-sent' }))])
        expect(outcomes).toEqual([{ status: 'sent' }, { status: 'retry', message: expect.stringContaining('CONVERSION_NOT_FOUND'), retryAfterMs: 3_600_000 }])
        expect(google.adjustments.map((a) => a.adjustment.orderId)).toEqual(['dm-1'])
        expect(await deliver([item('retraction', { at: now }, sale)])).toEqual([{ status: 'sent' }])
        expect(google.adjustments).toHaveLength(1)
      })

      it('the start-up check names a token without the scope its API needs, and passes one that has it', async () => {
        const base = { baseUrl: dataManagerOnly.url, oauthUrl: dataManagerOnly.oauthUrl, refreshToken: '1//data-manager-only' }
        expect(await googleAds.startupCheck!(options(base), ctx)).toEqual([])
        expect(await googleAds.startupCheck!(options({ ...base, adjustments: { refreshToken: '1//data-manager-only' } }), ctx)).toEqual([
          'adjustments.refreshToken was granted https://www.googleapis.com/auth/datamanager, not https://www.googleapis.com/auth/adwords: refunds through the Google Ads API will be refused until it has that scope; without the adjustments block they are restated through the Data Manager API (README "Refunds")',
        ])
        expect(await googleAds.startupCheck!(options({ ...base, api: 'upload-clicks' }), ctx)).toEqual([
          'refreshToken was granted https://www.googleapis.com/auth/datamanager, not https://www.googleapis.com/auth/adwords: every click upload and refund will be refused',
        ])
        expect(await googleAds.startupCheck!(options({ ...base, refreshToken: '1//revoked' }), ctx)).toEqual([
          expect.stringMatching(/^refreshToken could not be exchanged for an access token: Google OAuth refused the refresh token with invalid_grant/),
        ])
        expect(await googleAds.startupCheck!(opts(), ctx)).toEqual([])
      })

      it('a token with only the Data Manager scope: the default restatement reaches Google; the Google Ads API refuses it in Google\'s words', async () => {
        const base = { baseUrl: dataManagerOnly.url, oauthUrl: dataManagerOnly.oauthUrl, refreshToken: '1//data-manager-only' }
        const sale = conversion({ messageId: 'dm-2', occurredAt: new Date(Date.now() - 3_600_000) })
        const call = async (opts: GoogleAdsOptions, items: AdjustmentEvent[]) => adjustments.parseResponse(await send(adjustments.toRequest(items, opts), await adjustments.authorize!(opts, ctx)), items)
        expect(googleAds.parseResponse(await send(googleAds.toRequest([sale], options(base)), await googleAds.authorize!(options(base), ctx)), [sale])).toEqual([{ status: 'sent' }])

        expect(await call(options(base), [item('restatement', { value: 40, at: new Date() }, sale)])).toEqual([{ status: 'sent' }])
        expect(dataManagerOnly.restatements.map((r) => [r.orderId, r.from.value, r.event.conversionValue])).toEqual([['dm-2', 100, 40]])
        expect(dataManagerOnly.conversions.map((c) => c.conversion.conversionValue)).toEqual([40])

        const viaAdsApi = options({ ...base, adjustments: { refreshToken: '1//data-manager-only' } })
        // Google's own answer to a token without the API's scope.
        const raw = await send(adjustments.toRequest([item('retraction', { at: new Date() }, sale)], viaAdsApi), await adjustments.authorize!(viaAdsApi, ctx))
        expect([raw.status, JSON.parse(raw.body)]).toEqual([403, { error: {
          code: 403, message: 'Request had insufficient authentication scopes.', status: 'PERMISSION_DENIED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', domain: 'googleapis.com', metadata: { method: 'google.ads.googleads.v26.services.ConversionAdjustmentUploadService.UploadConversionAdjustments', service: 'googleads.googleapis.com' } }],
        } }])
        const [refused] = await call(viaAdsApi, [item('retraction', { at: new Date() }, sale)])
        expect(refused).toEqual({ status: 'rejected', message: expect.stringContaining('PERMISSION_DENIED: Request had insufficient authentication scopes.; reason ACCESS_TOKEN_SCOPE_INSUFFICIENT') })
        expect((refused as { message: string }).message).toContain(SCOPE_HINT)
        expect(dataManagerOnly.adjustments).toEqual([])
      })
    })
  })
}

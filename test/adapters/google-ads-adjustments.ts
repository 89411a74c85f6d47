/** Google Ads refunds (UploadConversionAdjustments): the mapping, the answers, and a round trip through the fake. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import googleAds, { googleAdsOptions, type GoogleAdsOptions } from '../../adapters/ads/google-ads/index.ts'
import type { UploadConversionAdjustmentsBody } from '../../adapters/ads/google-ads/map-adjustments.ts'
import type { AdjustmentEvent, ConversionEvent } from '../../core/delivery/types.ts'
import type { AuthContext } from '../../core/registry.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
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
const bodyOf = (items: AdjustmentEvent[], opts = options()) => JSON.parse(adjustments.toRequest(items, opts).body) as UploadConversionAdjustmentsBody
const reply = (payload: unknown) => ({ status: 200, headers: new Headers(), body: JSON.stringify(payload) })
const rowError = (index: number, name: string, message: string) => ({
  errorCode: { conversionAdjustmentUploadError: name }, message, location: { fieldPathElements: [{ fieldName: 'conversion_adjustments', index }, { fieldName: 'order_id' }] },
})
const partialFailure = (...errors: unknown[]) => ({ partialFailureError: { code: 3, message: 'partial failure', details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure', errors }] }, results: [] })

export function adjustmentTests(): void {
  describe('google_ads refunds (UploadConversionAdjustments)', () => {
    it('posts retractions and restatements to the Google Ads API, by the order id the conversion was sent under', () => {
      const request = adjustments.toRequest([item('retraction'), item('restatement', {}, conversion({ messageId: 'order-2' }))], options())
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
      const request = adjustments.toRequest([item('retraction')], options({ baseUrl: 'http://127.0.0.1:9/google', validateOnly: true }))
      expect(request.url).toBe('http://127.0.0.1:9/google/v26/customers/1234567890:uploadConversionAdjustments')
      expect(JSON.parse(request.body).validateOnly).toBe(true)
    })

    it('moves a refund stamped at or before the sale to one second after it', () => {
      const [row] = bodyOf([item('retraction', { at: new Date('2026-11-20T09:00:00Z') })]).conversionAdjustments
      expect(row!.adjustmentDateTime).toBe('2026-11-20 09:08:08+00:00')
    })

    it('skips a refund Google cannot be told: no conversion action for the event, a restatement without a value', () => {
      expect(adjustments.skipReason!(item('retraction', {}, conversion({ standardEvent: 'Schedule' })), options())).toBe('no Google Ads conversion action is configured for Schedule')
      expect(adjustments.skipReason!(item('restatement', { value: undefined }), options())).toMatch(/cannot be restated/)
      expect(adjustments.skipReason!(item('retraction'), options())).toBeUndefined()
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
      const cache = new Map<string, string>()
      const ctx: AuthContext = { fetch, cache: { get: async (k) => cache.get(k) ?? null, set: async (k, value) => void cache.set(k, value) }, signal: AbortSignal.timeout(5000) }
      beforeAll(async () => {
        google = await startFakeGoogleAds()
      })
      afterAll(async () => {
        await google?.close()
      })
      const opts = () => options({ baseUrl: google.url, oauthUrl: google.oauthUrl })
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
    })
  })
}

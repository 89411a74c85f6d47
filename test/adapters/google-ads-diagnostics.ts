/**
 * Google's delayed diagnostics (requestStatus:retrieve): the request id kept from the ingest answer, the status call,
 * and each event's verdict, read from answers shaped as request_status_per_destination.proto and from the fake.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import googleAds, { googleAdsOptions, type GoogleAdsOptions } from '../../adapters/ads/google-ads/index.ts'
import type { ConversionEvent } from '../../core/delivery/types.ts'
import type { AuthContext } from '../../core/registry.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { roundTrip } from '../fakes/google-protos.ts'
import { send } from '../fakes/helpers.ts'

const diagnostics = googleAds.diagnostics!
const options = (overrides: Record<string, unknown> = {}): GoogleAdsOptions => v.parse(googleAdsOptions, {
  customerId: '123-456-7890', clientId: 'fake-client.apps.googleusercontent.com', clientSecret: 'GOCSPX-fake-secret',
  refreshToken: '1//fake-refresh-token', conversionActions: { Purchase: '111', Lead: '222' }, ...overrides,
})
const conversion = (overrides: Partial<ConversionEvent> = {}): ConversionEvent => ({
  messageId: 'order-1', siteId: 'demo', event: 'order_paid', standardEvent: 'Purchase', occurredAt: new Date(Date.now() - 3_600_000),
  value: 100, currency: 'EUR', items: [], channel: 'online', identity: {}, clickIds: { gclid: 'Cj0KCQ-fake' },
  consent: { adUserData: 'granted', adPersonalization: 'granted' }, confirmation: 'payment_confirmed', ...overrides,
})
const reply = (status: number, payload: unknown) => ({ status, headers: new Headers(), body: JSON.stringify(payload) })
const destination = (action: string) => ({ reference: action, operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' }, productDestinationId: action })
const statusOf = (action: string, requestStatus: string, recordCount: number, errorCounts?: { recordCount: string, reason: string }[]) => ({
  destination: destination(action), requestStatus, ...(errorCounts ? { errorInfo: { errorCounts } } : {}), eventsIngestionStatus: { recordCount: String(recordCount) },
})

export function diagnosticsTests(): void {
  describe('google_ads delayed diagnostics (requestStatus:retrieve)', () => {
    it('keeps the request id of a 2xx ingest answer, and asks for its status with a GET 30 minutes later at the earliest', () => {
      expect(diagnostics.receiptOf(reply(200, { requestId: '9f1c5c7e-1' }))).toBe('9f1c5c7e-1')
      expect(diagnostics.receiptOf(reply(200, { results: [], jobId: '1' }))).toBeUndefined()
      expect(diagnostics.receiptOf({ status: 200, headers: new Headers(), body: '<html>' })).toBeUndefined()
      expect(diagnostics.toRequest('9f1c/5c7e', options())).toEqual({ url: 'https://datamanager.googleapis.com/v1/requestStatus:retrieve?requestId=9f1c%2F5c7e', method: 'GET', headers: {}, body: '' })
      expect(diagnostics.firstCheckAfterMs).toBe(30 * 60_000)
    })

    it('reads each event\'s verdict from its conversion action\'s destination', () => {
      const answer = reply(200, { requestStatusPerDestination: [
        statusOf('111', 'FAILED', 2, [{ recordCount: '2', reason: 'PROCESSING_ERROR_REASON_EVENT_TOO_OLD' }]),
        statusOf('222', 'SUCCESS', 1),
      ] })
      const events = [conversion(), conversion({ messageId: 'lead-1', standardEvent: 'Lead' })]
      expect(diagnostics.parseResponse(answer, events, options())).toEqual([
        { status: 'failed', message: 'Google rejected the event after accepting the request: FAILED (conversion action 111, 2 events in the request): PROCESSING_ERROR_REASON_EVENT_TOO_OLD ×2 (The conversion is older than max supported age.)' },
        { status: 'done', note: 'Google processed the request: SUCCESS (conversion action 222, 1 event in the request)' },
      ])
    })

    it('PARTIAL_SUCCESS names the reasons but no event, so the delivery stays sent; PROCESSING is looked at again', () => {
      const partial = reply(200, { requestStatusPerDestination: [statusOf('111', 'PARTIAL_SUCCESS', 3, [{ recordCount: '1', reason: 'PROCESSING_ERROR_REASON_INVALID_GCLID' }])] })
      expect(diagnostics.parseResponse(partial, [conversion()], options())).toEqual([{
        status: 'done', note: 'Google processed the request: PARTIAL_SUCCESS (conversion action 111, 3 events in the request): 1 failed: PROCESSING_ERROR_REASON_INVALID_GCLID ×1 (The google click ID could not be decoded.); Google does not say which events, so this one stays sent',
      }])
      const processing = reply(200, { requestStatusPerDestination: [statusOf('111', 'PROCESSING', 3)] })
      expect(diagnostics.parseResponse(processing, [conversion()], options())).toEqual([{ status: 'processing' }])
    })

    it('a status call Google refuses for good ends the look with its words; a quota or server error is looked at again', () => {
      const invalid = reply(400, { error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'requestId', reason: 'INVALID_REQUEST_ID', description: 'The request ID is not valid.' }] }] } })
      expect(diagnostics.parseResponse(invalid, [conversion()], options())).toEqual([{ status: 'done', note: expect.stringMatching(/^Google's diagnostics could not be read: INVALID_ARGUMENT: Request contains an invalid argument.; INVALID_REQUEST_ID at requestId/) }])
      const busy = reply(503, { error: { code: 503, status: 'UNAVAILABLE', message: 'The service is currently unavailable.' } })
      expect(diagnostics.parseResponse(busy, [conversion()], options())).toEqual([{ status: 'retry', message: 'could not read Google\'s diagnostics: UNAVAILABLE: The service is currently unavailable.' }])
    })

    describe('against the fake Google', () => {
      let google: FakeGoogleAds
      const cache = new Map<string, string>()
      const ctx: AuthContext = { fetch, cache: { get: async (k) => cache.get(k) ?? null, set: async (k, value) => void cache.set(k, value) }, get signal() { return AbortSignal.timeout(10_000) } } // a fresh timeout per call: one made at collection time runs out on a slow machine
      beforeAll(async () => {
        google = await startFakeGoogleAds({ processingLooks: 1, processingError: (event) => event.adIdentifiers?.gclid === 'Cj0KCQ-too-old' ? 'PROCESSING_ERROR_REASON_EVENT_TOO_OLD' : undefined })
      })
      afterAll(async () => {
        await google?.close()
      })

      it('an event Google accepted and then rejected: PROCESSING first, then FAILED with Google\'s reason; the other stays SUCCESS', async () => {
        const opts = options({ baseUrl: google.url, oauthUrl: google.oauthUrl })
        const events = [conversion({ messageId: 'late-1', clickIds: { gclid: 'Cj0KCQ-too-old' } }), conversion({ messageId: 'fine-1', standardEvent: 'Lead' })]
        const ingested = await send(googleAds.toRequest(events, opts), await googleAds.authorize!(opts, ctx))
        expect(googleAds.parseResponse(ingested, events)).toEqual([{ status: 'sent' }, { status: 'sent' }])
        const receipt = diagnostics.receiptOf(ingested)!
        const look = async () => {
          const answer = await send(diagnostics.toRequest(receipt, opts), await diagnostics.authorize!(opts, ctx))
          expect(roundTrip('RetrieveRequestStatusResponse', JSON.parse(answer.body))).toEqual(JSON.parse(answer.body))
          return diagnostics.parseResponse(answer, events, opts)
        }
        expect(await look()).toEqual([{ status: 'processing' }, { status: 'processing' }])
        expect(await look()).toEqual([
          { status: 'failed', message: expect.stringContaining('FAILED (conversion action 111, 1 event in the request): PROCESSING_ERROR_REASON_EVENT_TOO_OLD ×1') },
          { status: 'done', note: expect.stringContaining('SUCCESS (conversion action 222') },
        ])
        // Google never recorded the rejected one.
        expect(google.conversions.map((c) => c.conversion.orderId)).toEqual(['fine-1'])
      })
    })
  })
}

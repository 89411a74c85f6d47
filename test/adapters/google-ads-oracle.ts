/**
 * Issue 24 item 8: every Data Manager API body dcgate builds, and every answer the fake gives, is read by the official
 * Node client's message types (`@google-ads/datamanager`, a dev dependency: test/fakes/google-protos.ts) and written
 * back unchanged. A field or an enum value Google's types do not know would be dropped by the round trip and fail here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import googleAds, { googleAdsOptions, type GoogleAdsOptions } from '../../adapters/ads/google-ads/index.ts'
import type { AdjustmentEvent, ConversionEvent } from '../../core/delivery/types.ts'
import type { AuthContext } from '../../core/registry.ts'
import { fixtureEvents, probeEvents } from '../contract/fixtures.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { DATA_MANAGER_CLIENT_VERSION, roundTrip } from '../fakes/google-protos.ts'
import { send } from '../fakes/helpers.ts'

const options = (overrides: Record<string, unknown> = {}): GoogleAdsOptions => v.parse(googleAdsOptions, {
  customerId: '123-456-7890', clientId: 'fake-client.apps.googleusercontent.com', clientSecret: 'GOCSPX-fake-secret',
  refreshToken: '1//fake-refresh-token', conversionActions: { Purchase: '111', Lead: '222', CompleteRegistration: '333', Schedule: '444' }, ...overrides,
})
/** The events the adapter would send (the contract's fixtures and probes it does not skip). */
const sendable = (opts: GoogleAdsOptions): ConversionEvent[] => [...fixtureEvents(), ...probeEvents()].filter((event) => !googleAds.skipReason!(event, opts))
const refundsOf = (events: ConversionEvent[]): AdjustmentEvent[] => events.map((conversion, i) => ({
  conversion, adjustment: i % 2 ? { type: 'restatement', refundId: `r${i}`, at: new Date(), value: 12.5, currency: 'EUR' } : { type: 'retraction', refundId: `r${i}`, at: new Date() },
}))

export function oracleTests(): void {
  describe(`google_ads bodies read by the official client's types (@google-ads/datamanager ${DATA_MANAGER_CLIENT_VERSION})`, () => {
    it('every events:ingest request (fixtures, probes, a manager account, test mode) round-trips unchanged', () => {
      for (const opts of [options(), options({ loginCustomerId: '987-654-3210', validateOnly: true })]) {
        const events = sendable(opts)
        expect(events.length).toBeGreaterThan(10)
        const body = JSON.parse(googleAds.toRequest(events, opts).body)
        expect(roundTrip('IngestEventsRequest', body)).toEqual(body)
      }
    })

    it('every refund restated through events:ingest round-trips unchanged, a zero value included', () => {
      const body = JSON.parse(googleAds.adjustments!.toRequest(refundsOf(sendable(options())), options()).body)
      expect(body.events[0].conversionValue).toBe(0)
      expect(roundTrip('IngestEventsRequest', body)).toEqual(body)
    })

    it('the status call\'s query is a RetrieveRequestStatusRequest', () => {
      const url = new URL(googleAds.diagnostics!.toRequest('9f1c5c7e-0b5d-4c1e-9a43-1f2f3c4d5e6f', options()).url)
      const request = Object.fromEntries(url.searchParams)
      expect(request).toEqual({ requestId: '9f1c5c7e-0b5d-4c1e-9a43-1f2f3c4d5e6f' })
      expect(roundTrip('RetrieveRequestStatusRequest', request)).toEqual(request)
    })

    it('a field Google\'s types do not know is caught: the round trip drops it', () => {
      const body = JSON.parse(googleAds.toRequest(fixtureEvents(), options()).body)
      body.events[0].adjustmentType = 'RETRACTION'
      body.events[1].eventSource = 'SHOP'
      expect(roundTrip('IngestEventsRequest', body)).not.toEqual(body)
    })

    describe('the fake\'s answers', () => {
      let google: FakeGoogleAds
      const cache = new Map<string, string>()
      const ctx: AuthContext = { fetch, cache: { get: async (k) => cache.get(k) ?? null, set: async (k, value) => void cache.set(k, value) }, get signal() { return AbortSignal.timeout(10_000) } } // a fresh timeout per call: one made at collection time runs out on a slow machine
      beforeAll(async () => {
        google = await startFakeGoogleAds()
      })
      afterAll(async () => {
        await google?.close()
      })

      it('an events:ingest answer is an IngestEventsResponse; the fake refuses what the types do not know, naming it', async () => {
        const opts = options({ baseUrl: google.url, oauthUrl: google.oauthUrl })
        const headers = await googleAds.authorize!(opts, ctx)
        const sent = await send(googleAds.toRequest(fixtureEvents(new Date(Date.now() - 60_000)), opts), headers)
        expect(sent.status).toBe(200)
        const answer = JSON.parse(sent.body)
        expect(roundTrip('IngestEventsResponse', answer)).toEqual(answer)

        const request = googleAds.toRequest(fixtureEvents(new Date(Date.now() - 60_000)), opts)
        const body = JSON.parse(request.body)
        body.events[0].adIdentifiers.clickId = 'x'
        const refused = await send({ ...request, body: JSON.stringify(body) }, headers)
        expect(refused.status).toBe(400)
        expect(JSON.parse(refused.body).error.details[0].fieldViolations).toEqual([
          { field: 'events[0].adIdentifiers', reason: 'INVALID_ARGUMENT', description: 'Invalid JSON payload received. Unknown name "clickId" at \'events[0].adIdentifiers\': Cannot find field.' },
        ])
      })
    })
  })
}

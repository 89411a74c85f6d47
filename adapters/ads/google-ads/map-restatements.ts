/**
 * Pure mapping of refunds to the Data Manager API, the default: each refund is the conversion's own event sent again
 * through `events:ingest` with the value left after it (zero for a full refund or a cancellation). Google matches it to
 * the recorded conversion by `transactionId` within the same conversion action and overwrites `conversionValue` and
 * `currency`; every other field is kept as first recorded, but the event must still carry every required field and at
 * least one identifier (README "Refunds"; developers.google.com/data-manager/api/devguides/events/google-ads/conversion-adjustments).
 */
import type { AdjustmentEvent, ConversionAdjustment, PlatformRequest } from '../../../core/delivery/types.ts'
import type { GoogleAdsOptions } from './index.ts'
import { skipReason, toIngestRequest, type IngestEvent, type IngestEventsBody } from './map.ts'

/**
 * The conversions' own request (the same destinations, transactionIds, timestamps and identifiers; the IP and user agent
 * only while still kept), each event with the value left after its refund. The Data Manager API has no retraction: a
 * full refund restates the value to zero and the conversion still counts once (a retraction needs the Google Ads API).
 */
export function toRestatementRequest(items: readonly AdjustmentEvent[], options: GoogleAdsOptions): PlatformRequest {
  const request = toIngestRequest(items.map((item) => item.conversion), options)
  const body = JSON.parse(request.body) as IngestEventsBody
  body.events = body.events.map((event, index) => restated(event, items[index]!.adjustment))
  return { ...request, body: JSON.stringify(body) }
}

/** `conversionValue` and `currency`, the two fields Google overwrites on a matched event; conversion_value is proto3 `optional`, so 0 is sent. */
function restated(event: IngestEvent, adjustment: ConversionAdjustment): IngestEvent {
  const currency = adjustment.currency ?? event.currency
  return { ...event, conversionValue: adjustment.type === 'retraction' ? 0 : adjustment.value!, ...(currency ? { currency } : {}) }
}

/**
 * Why a refund cannot be restated through the Data Manager API, or undefined when it can. The conversion's own reasons
 * come first: Google refuses a restatement without an identifier (NO_IDENTIFIERS_PROVIDED) as it refuses an event.
 */
export function restatementSkipReason({ conversion, adjustment }: AdjustmentEvent, options: GoogleAdsOptions): string | undefined {
  const reason = skipReason(conversion, options)
  if (reason) return reason
  if (conversion.value === undefined) {
    return 'the conversion was sent without a value: the Data Manager API can only restate a value, and retracting the conversion needs the Google Ads API (google_ads.adjustments, README "Refunds")'
  }
  if (adjustment.type === 'restatement' && adjustment.value === undefined) return 'a partial refund of a conversion without a value cannot be restated'
  return undefined
}

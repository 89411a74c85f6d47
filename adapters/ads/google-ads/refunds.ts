/**
 * Which API a refund takes (README "Refunds"). By default the Data Manager API, with the token the conversions use: the
 * value left is restated through `events:ingest` (map-restatements.ts). The Google Ads API's
 * UploadConversionAdjustments (map-adjustments.ts), which can also retract a conversion (count and value to zero), is
 * used only where its credentials are configured: `adjustments.refreshToken` on the Data Manager path, or the
 * destination's own token on the legacy `upload-clicks` path, whose token already has the adwords scope.
 */
import type { AdjustmentEvent, DeliveryOutcome, PlatformRequest, PlatformResponse } from '../../../core/delivery/types.ts'
import type { AuthContext } from '../../../core/registry.ts'
import { authorizeGoogleAds } from './auth.ts'
import type { GoogleAdsOptions } from './index.ts'
import { adjustmentSkipReason, authorizeAdjustments, toAdjustmentsRequest } from './map-adjustments.ts'
import { restatementSkipReason, toRestatementRequest } from './map-restatements.ts'
import { parseIngestResponse } from './response.ts'
import { parseAdjustmentsResponse } from './response-adjustments.ts'

/** CONVERSION_EXPIRED: "Adjustment can't be made to a conversion that occurred more than 54 days ago". */
export const ADS_API_MAX_CONVERSION_AGE_DAYS = 54

/** True when refunds go through the Google Ads API (its credentials are configured), false for the Data Manager API. */
export function refundsThroughAdsApi(options: Pick<GoogleAdsOptions, 'api' | 'adjustments'>): boolean {
  return options.api === 'upload-clicks' || options.adjustments !== undefined
}

export function toRefundRequest(items: readonly AdjustmentEvent[], options: GoogleAdsOptions): PlatformRequest {
  return refundsThroughAdsApi(options) ? toAdjustmentsRequest(items, options) : toRestatementRequest(items, options)
}

export function refundSkipReason(item: AdjustmentEvent, options: GoogleAdsOptions): string | undefined {
  if (!refundsThroughAdsApi(options)) return restatementSkipReason(item, options)
  // Measured from the refund, so the mapping stays pure; a refund retried past the limit is refused by Google.
  const days = (item.adjustment.at.getTime() - item.conversion.occurredAt.getTime()) / 86_400_000
  if (days > ADS_API_MAX_CONVERSION_AGE_DAYS) {
    return `the conversion happened ${Math.floor(days)} days before the refund; the Google Ads API adjusts conversions at most ${ADS_API_MAX_CONVERSION_AGE_DAYS} days old`
  }
  return adjustmentSkipReason(item, options)
}

/** The Data Manager path uses the conversions' own token and headers; the Google Ads API its own (adwords scope). */
export function authorizeRefunds(options: GoogleAdsOptions, ctx: AuthContext): Promise<Record<string, string>> {
  return refundsThroughAdsApi(options) ? authorizeAdjustments(options, ctx) : authorizeGoogleAds(options, ctx)
}

/**
 * parseResponse is not given the options, so the answer tells the API: only the Google Ads API answers with
 * `results`, `jobId`, a `partialFailureError` or a GoogleAdsFailure detail. Everything else (`{requestId}`, a plain
 * google.rpc.Status) is read as the Data Manager API's answer, which means the same on both paths.
 */
export function parseRefundResponse(response: PlatformResponse, items: readonly AdjustmentEvent[]): DeliveryOutcome[] {
  return /"(partialFailureError|results|jobId)"\s*:|\.GoogleAdsFailure"/.test(response.body)
    ? parseAdjustmentsResponse(response, items)
    : parseIngestResponse(response, items.map((item) => item.conversion))
}

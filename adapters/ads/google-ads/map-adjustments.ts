/**
 * Pure mapping of refunds to the Google Ads API's ConversionAdjustmentUploadService.UploadConversionAdjustments
 * (REST, lowerCamelCase names of google/ads/googleads/v26/services/conversion_adjustment_upload_service.proto): a
 * RETRACTION for a full refund, a RESTATEMENT with the value left for a partial one. Used where the Google Ads API's
 * credentials are configured (refunds.ts); otherwise refunds are restated through the Data Manager API.
 */
import type { AdjustmentEvent, PlatformRequest } from '../../../core/delivery/types.ts'
import type { AuthContext } from '../../../core/registry.ts'
import { authorizeGoogleAds } from './auth.ts'
import { DEFAULT_BASE_URL, type GoogleAdsOptions } from './index.ts'
import { actionFor } from './map.ts'
import { toConversionDateTime } from './map-upload-clicks.ts'
import { UPLOAD_CLICKS_VERSION } from './version.ts'

export interface ConversionAdjustmentRow {
  conversionAction: string
  adjustmentType: 'RETRACTION' | 'RESTATEMENT'
  adjustmentDateTime: string
  orderId: string
  /** Required for a restatement, refused on a retraction (the proto's comment). */
  restatementValue?: { adjustedValue: number, currencyCode?: string }
}

export interface UploadConversionAdjustmentsBody {
  conversionAdjustments: ConversionAdjustmentRow[]
  partialFailure: true
  validateOnly?: true
}

export function toAdjustmentsRequest(items: readonly AdjustmentEvent[], options: GoogleAdsOptions): PlatformRequest {
  const body: UploadConversionAdjustmentsBody = {
    conversionAdjustments: items.map((item) => toAdjustmentRow(item, options)),
    // Required to be true, as for click uploads: rows are accepted or refused one by one.
    partialFailure: true,
    ...(options.validateOnly ? { validateOnly: true as const } : {}),
  }
  return {
    url: `${adjustmentsBaseUrl(options)}/${UPLOAD_CLICKS_VERSION}/customers/${options.customerId}:uploadConversionAdjustments`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }
}

function toAdjustmentRow({ conversion, adjustment }: AdjustmentEvent, options: GoogleAdsOptions): ConversionAdjustmentRow {
  // "Must be after the conversion_date_time": a refund stamped at or before the sale (clock skew between a shop and
  // its payment provider) is moved to one second after it. Google compares whole seconds.
  const at = Math.max(adjustment.at.getTime(), Math.floor(conversion.occurredAt.getTime() / 1000) * 1000 + 1000)
  return {
    conversionAction: `customers/${options.customerId}/conversionActions/${actionFor(conversion, options)!}`,
    adjustmentType: adjustment.type === 'retraction' ? 'RETRACTION' : 'RESTATEMENT',
    adjustmentDateTime: toConversionDateTime(new Date(at)),
    // The id the conversion was sent under: Data Manager transactionId and click uploads' orderId are both the messageId.
    orderId: conversion.messageId,
    ...(adjustment.type === 'restatement' && adjustment.value !== undefined
      ? { restatementValue: { adjustedValue: adjustment.value, ...(adjustment.currency ? { currencyCode: adjustment.currency } : {}) } }
      : {}),
  }
}

/** Why a refund cannot be told: the conversion's event has no conversion action, or a restatement has no value. */
export function adjustmentSkipReason({ conversion, adjustment }: AdjustmentEvent, options: GoogleAdsOptions): string | undefined {
  if (!actionFor(conversion, options)) return `no Google Ads conversion action is configured for ${conversion.standardEvent}`
  if (adjustment.type === 'restatement' && adjustment.value === undefined) return 'a partial refund of a conversion without a value cannot be restated'
  return undefined
}

/** The Google Ads API host: a configured baseUrl (a proxy, a fake) serves both APIs; the default is the Ads API's own. */
export function adjustmentsBaseUrl(options: Pick<GoogleAdsOptions, 'baseUrl'>): string {
  return options.baseUrl === DEFAULT_BASE_URL['data-manager'] ? DEFAULT_BASE_URL['upload-clicks'] : options.baseUrl
}

/**
 * The Google Ads API's headers: a bearer token with the adwords scope (`adjustments.refreshToken`, and its OAuth client
 * when given; else the destination's own, as on the upload-clicks path), the developer token and manager id when set.
 */
export function authorizeAdjustments(options: GoogleAdsOptions, ctx: AuthContext): Promise<Record<string, string>> {
  const own = options.adjustments
  return authorizeGoogleAds({
    ...options,
    api: 'upload-clicks',
    refreshToken: own?.refreshToken ?? options.refreshToken,
    clientId: own?.clientId ?? options.clientId,
    clientSecret: own?.clientSecret ?? options.clientSecret,
  }, ctx)
}

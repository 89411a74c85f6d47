/**
 * Pure mapping for the legacy path (`api: 'upload-clicks'`): our conversions → one
 * ConversionUploadService.UploadClickConversions REST call. Field names are the REST (lowerCamelCase) names of
 * google/ads/googleads/v26/services/conversion_upload_service.proto. Google refuses this call to new adopters since
 * 2026-06-15; the default path is the Data Manager API (map.ts).
 */
import type { ConsentState, ConversionEvent, PlatformRequest } from '../../../core/delivery/types.ts'
import type { GoogleAdsOptions } from './index.ts'
import { actionFor, clickIdOf, hashedIdentifiers } from './map.ts'
import { UPLOAD_CLICKS_VERSION } from './version.ts'

export type ConsentStatus = 'GRANTED' | 'DENIED' | 'UNSPECIFIED'

export type UserIdentifier =
  | { userIdentifierSource: 'FIRST_PARTY', hashedEmail: string }
  | { userIdentifierSource: 'FIRST_PARTY', hashedPhoneNumber: string }

export interface ClickConversion {
  conversionAction: string
  conversionDateTime: string
  gclid?: string
  gbraid?: string
  wbraid?: string
  conversionValue?: number
  currencyCode?: string
  orderId: string
  userIdentifiers?: UserIdentifier[]
  /** adPersonalization is left out: the proto allows it only for OfflineUserDataJobService and UserDataService. */
  consent: { adUserData: ConsentStatus }
}

export interface UploadClickConversionsBody {
  conversions: ClickConversion[]
  partialFailure: true
  validateOnly?: true
}

export function toUploadRequest(events: readonly ConversionEvent[], options: GoogleAdsOptions): PlatformRequest {
  const body: UploadClickConversionsBody = {
    conversions: events.map((event) => toClickConversion(event, options)),
    // Required, and Google says always true: valid rows are recorded, invalid ones come back in partialFailureError.
    partialFailure: true,
    ...(options.validateOnly ? { validateOnly: true as const } : {}),
  }
  return {
    url: `${options.baseUrl}/${UPLOAD_CLICKS_VERSION}/customers/${options.customerId}:uploadClickConversions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }
}

export function toClickConversion(event: ConversionEvent, options: GoogleAdsOptions): ClickConversion {
  // skipReason refuses a standard event without a conversion action, so there is one.
  const actionId = actionFor(event, options)!
  const userIdentifiers = toUserIdentifiers(event)
  return {
    conversionAction: `customers/${options.customerId}/conversionActions/${actionId}`,
    conversionDateTime: toConversionDateTime(event.occurredAt),
    ...clickIdOf(event),
    ...(event.value !== undefined ? { conversionValue: event.value } : {}),
    ...(event.currency ? { currencyCode: event.currency } : {}),
    // Google keeps one conversion per orderId per action. Like every adapter we dedupe on the messageId (the
    // integrator's own order id is not sent; README "Deduplication"): a retried upload is refused as
    // ORDER_ID_ALREADY_IN_USE, which response-upload-clicks.ts counts as sent, instead of being counted twice.
    orderId: event.messageId,
    ...(userIdentifiers.length ? { userIdentifiers } : {}),
    consent: { adUserData: toConsentStatus(event.consent.adUserData) },
  }
}

/** Google's "yyyy-mm-dd hh:mm:ss+|-hh:mm", always written in UTC: "2026-11-21 07:20:12+00:00". */
export function toConversionDateTime(date: Date): string {
  const iso = date.toISOString() // 2026-11-21T07:20:12.345Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}+00:00`
}

export function toConsentStatus(state: ConsentState): ConsentStatus {
  if (state === 'granted') return 'GRANTED'
  if (state === 'denied') return 'DENIED'
  return 'UNSPECIFIED'
}

/** Hashed email and phone, the only identifiers click uploads accept (names and addresses are refused). */
function toUserIdentifiers(event: ConversionEvent): UserIdentifier[] {
  const { email, phone } = hashedIdentifiers(event)
  return [
    ...(email ? [{ userIdentifierSource: 'FIRST_PARTY' as const, hashedEmail: email }] : []),
    ...(phone ? [{ userIdentifierSource: 'FIRST_PARTY' as const, hashedPhoneNumber: phone }] : []),
  ]
}

/**
 * Pure mapping: our conversions → one ConversionUploadService.UploadClickConversions REST call.
 * Field names are the REST (lowerCamelCase) names of google/ads/googleads/v26/services/conversion_upload_service.proto.
 */
import type { ConsentState, ConversionEvent, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import type { GoogleAdsOptions } from './index.ts'
import { GOOGLE_ADS_API_VERSION } from './version.ts'

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
    url: `${options.baseUrl}/${GOOGLE_ADS_API_VERSION}/customers/${options.customerId}:uploadClickConversions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }
}

export function toClickConversion(event: ConversionEvent, options: GoogleAdsOptions): ClickConversion {
  // skipReason refuses a standard event without a conversion action, so there is one.
  const actionId = actionFor(event.standardEvent, options)!
  const userIdentifiers = toUserIdentifiers(event)
  return {
    conversionAction: `customers/${options.customerId}/conversionActions/${actionId}`,
    conversionDateTime: toConversionDateTime(event.occurredAt),
    ...toClickId(event),
    ...(event.value !== undefined ? { conversionValue: event.value } : {}),
    ...(event.currency ? { currencyCode: event.currency } : {}),
    // Google keeps one conversion per orderId per action. Like every adapter we dedupe on the messageId (the
    // integrator's own order id is not sent; README "Deduplication"): a retried upload is refused as
    // ORDER_ID_ALREADY_IN_USE, which response.ts counts as sent, instead of being counted twice.
    orderId: event.messageId,
    ...(userIdentifiers.length ? { userIdentifiers } : {}),
    consent: { adUserData: toConsentStatus(event.consent.adUserData) },
  }
}

/** Why Google Ads will not take this event, or undefined when it will. */
export function skipReason(event: ConversionEvent, options: GoogleAdsOptions): string | undefined {
  if (!actionFor(event.standardEvent, options)) return `no Google Ads conversion action is configured for ${event.standardEvent}`
  if (Object.keys(toClickId(event)).length === 0 && toUserIdentifiers(event).length === 0) {
    return 'no gclid, gbraid or wbraid, and no hashed email or phone Google may use'
  }
  return undefined
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

function actionFor(standardEvent: StandardEvent, options: GoogleAdsOptions): string | undefined {
  return options.conversionActions[standardEvent]
}

/**
 * At most one click id goes in a conversion (Google's samples set exactly one; gbraid with wbraid is
 * GBRAID_WBRAID_BOTH_SET). The gclid wins, as in Google's samples; then gbraid, then wbraid.
 */
function toClickId(event: ConversionEvent): Pick<ClickConversion, 'gclid' | 'gbraid' | 'wbraid'> {
  const { gclid, gbraid, wbraid } = event.clickIds
  if (gclid) return { gclid }
  if (gbraid) return { gbraid }
  if (wbraid) return { wbraid }
  return {}
}

/**
 * Hashed email (Google's normalisation: gmail dots removed) and phone (E.164 with "+"): the only identifiers click
 * uploads accept. Only well-formed hashes leave, never anything else, and none when the visitor denied ad user data.
 */
function toUserIdentifiers(event: ConversionEvent): UserIdentifier[] {
  if (event.consent.adUserData === 'denied') return []
  const { emailGoogle, phoneE164 } = event.identity
  const identifiers: UserIdentifier[] = []
  if (isSha256Hex(emailGoogle)) identifiers.push({ userIdentifierSource: 'FIRST_PARTY', hashedEmail: emailGoogle })
  if (isSha256Hex(phoneE164)) identifiers.push({ userIdentifierSource: 'FIRST_PARTY', hashedPhoneNumber: phoneE164 })
  return identifiers
}

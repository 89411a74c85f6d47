/**
 * Pure mapping, default path: our conversions → one Data Manager API `events:ingest` call (IngestEventsRequest).
 * Field names are the JSON (lowerCamelCase) names of google/ads/datamanager/v1/{ingestion_service,event,destination,
 * device_info,user_data,consent}.proto; the README gives each field's source page. The helpers at the bottom are
 * shared with the legacy path (map-upload-clicks.ts).
 */
import { createHash } from 'node:crypto'
import type { Channel, ConsentState, ConversionEvent, PlatformRequest } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import type { GoogleAdsOptions } from './index.ts'
import { DATA_MANAGER_VERSION } from './version.ts'

export type DataManagerConsent = 'CONSENT_GRANTED' | 'CONSENT_DENIED' | 'CONSENT_STATUS_UNSPECIFIED'
export type EventSource = 'WEB' | 'IN_STORE' | 'PHONE'
interface ProductAccount { accountType: 'GOOGLE_ADS', accountId: string }

export interface Destination {
  reference: string
  operatingAccount: ProductAccount
  loginAccount?: ProductAccount
  productDestinationId: string
}

export interface IngestEvent {
  destinationReferences: [string]
  transactionId: string
  eventTimestamp: string
  adIdentifiers?: { gclid?: string, gbraid?: string, wbraid?: string, landingPageDeviceInfo?: { userAgent?: string, ipAddress?: string } }
  userData?: { userIdentifiers: ({ emailAddress: string } | { phoneNumber: string } | { address: AddressInfo })[] }
  conversionValue?: number
  currency?: string
  eventSource: EventSource
  consent: { adUserData: DataManagerConsent, adPersonalization: DataManagerConsent }
}

/** Google's AddressInfo: the names hashed like the email, the region (ISO 3166-1 alpha-2) and postal code in clear. */
export interface AddressInfo { givenName: string, familyName: string, regionCode: string, postalCode: string }

export interface IngestEventsBody {
  destinations: Destination[]
  events: IngestEvent[]
  /** The hashes are lowercase hex (core/identity); required whenever an event carries userData. */
  encoding: 'HEX'
  validateOnly?: true
}

export function toIngestRequest(events: readonly ConversionEvent[], options: GoogleAdsOptions): PlatformRequest {
  const body: IngestEventsBody = {
    destinations: toDestinations(events, options),
    events: events.map((event) => toIngestEvent(event, options)),
    encoding: 'HEX',
    ...(options.validateOnly ? { validateOnly: true as const } : {}),
  }
  return {
    url: `${options.baseUrl}/${DATA_MANAGER_VERSION}/events:ingest`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }
}

/**
 * One destination per conversion action the batch uses (a batch may mix standard events), in order of first use,
 * each named by its action id so that every event points at its own (`destinationReferences`).
 */
function toDestinations(events: readonly ConversionEvent[], options: GoogleAdsOptions): Destination[] {
  const actions = [...new Set(events.map((event) => actionFor(event, options)!))]
  return actions.map((actionId) => ({
    reference: actionId,
    operatingAccount: { accountType: 'GOOGLE_ADS', accountId: options.customerId },
    ...(options.loginCustomerId ? { loginAccount: { accountType: 'GOOGLE_ADS' as const, accountId: options.loginCustomerId } } : {}),
    productDestinationId: actionId,
  }))
}

export function toIngestEvent(event: ConversionEvent, options: GoogleAdsOptions): IngestEvent {
  const { email, phone } = hashedIdentifiers(event)
  const address = addressOf(event)
  const userIdentifiers = [...(email ? [{ emailAddress: email }] : []), ...(phone ? [{ phoneNumber: phone }] : []), ...(address ? [{ address }] : [])]
  const adIdentifiers = { ...clickIdOf(event), ...landingPageDevice(event) }
  return {
    // skipReason refuses a standard event without a conversion action, so there is one.
    destinationReferences: [actionFor(event, options)!],
    // Google's dedup key. Like every adapter we send the messageId, as given for a public conversion too (the order id
    // the tracking script sends, so it deduplicates with the site's own tag): README "Deduplication".
    transactionId: event.messageId,
    eventTimestamp: event.occurredAt.toISOString(),
    ...(Object.keys(adIdentifiers).length ? { adIdentifiers } : {}),
    ...(userIdentifiers.length ? { userData: { userIdentifiers } } : {}),
    ...(event.value !== undefined ? { conversionValue: event.value } : {}),
    ...(event.currency ? { currency: event.currency } : {}),
    eventSource: EVENT_SOURCE[event.channel],
    // A US opt-out of sale or sharing is an opt-out of targeted advertising: sent as ad personalization denied, the
    // consent signal Google has (no restricted-processing field exists for events; README).
    consent: {
      adUserData: toDataManagerConsent(event.consent.adUserData),
      adPersonalization: event.limitedDataUse ? 'CONSENT_DENIED' : toDataManagerConsent(event.consent.adPersonalization),
    },
  }
}

/** All four of AddressInfo are required: the hashed names, and the postal code and country kept in clear for Google. */
function addressOf({ identity, clear }: ConversionEvent): AddressInfo | undefined {
  if (!identity.firstName || !identity.lastName || !clear?.postalCode || !clear.countryCode) return undefined
  return { givenName: identity.firstName, familyName: identity.lastName, regionCode: clear.countryCode, postalCode: clear.postalCode }
}

/** A pick-up-in-store sale was bought on the website: WEB. Google's EventSource has no value of its own for it. */
const EVENT_SOURCE: Record<Channel, EventSource> = { online: 'WEB', bopis: 'WEB', in_store: 'IN_STORE', phone: 'PHONE' }

export function toDataManagerConsent(state: ConsentState): DataManagerConsent {
  if (state === 'granted') return 'CONSENT_GRANTED'
  if (state === 'denied') return 'CONSENT_DENIED'
  return 'CONSENT_STATUS_UNSPECIFIED'
}

/**
 * The device the person landed with after the ad click: for online and pick-up-in-store sales only (a sale in a
 * store or by phone has no landing page). Both are personal data: left out when ad user data is denied. The IP is also left out for a
 * person known to live in the EEA, the UK or Switzerland: Google Ads does not match IPs there and asks senders to
 * leave them out (device_info.proto). The country is only known as a hash, so it is compared with the hashes of those
 * codes.
 */
function landingPageDevice(event: ConversionEvent): { landingPageDeviceInfo?: { userAgent?: string, ipAddress?: string } } {
  if (event.consent.adUserData === 'denied' || (event.channel !== 'online' && event.channel !== 'bopis')) return {}
  const ipAddress = event.ip && !NO_IP_MATCHING.has(event.identity.country ?? '') ? event.ip : undefined
  const info = { ...(event.userAgent ? { userAgent: event.userAgent } : {}), ...(ipAddress ? { ipAddress } : {}) }
  return Object.keys(info).length ? { landingPageDeviceInfo: info } : {}
}

/** SHA-256 of the lowercase alpha-2 codes of the EEA (EU, Iceland, Liechtenstein, Norway), the UK and Switzerland. */
const NO_IP_MATCHING = new Set([
  'at', 'be', 'bg', 'hr', 'cy', 'cz', 'dk', 'ee', 'fi', 'fr', 'de', 'gr', 'hu', 'ie', 'it', 'lv', 'lt', 'lu', 'mt', 'nl',
  'pl', 'pt', 'ro', 'sk', 'si', 'es', 'se', 'is', 'li', 'no', 'gb', 'ch',
].map((code) => createHash('sha256').update(code).digest('hex')))

// --- shared with map-upload-clicks.ts ---

/** Why Google Ads will not take this event, or undefined when it will (both paths). */
export function skipReason(event: ConversionEvent, options: GoogleAdsOptions): string | undefined {
  if (!actionFor(event, options)) return `no Google Ads conversion action is configured for ${event.standardEvent}`
  const { email, phone } = hashedIdentifiers(event)
  if (Object.keys(clickIdOf(event)).length === 0 && !email && !phone) {
    return 'no gclid, gbraid or wbraid, and no hashed email or phone Google may use'
  }
  return undefined
}

/** The conversion action id configured for the event's standard event. */
export function actionFor(event: ConversionEvent, options: GoogleAdsOptions): string | undefined {
  return options.conversionActions[event.standardEvent]
}

/**
 * At most one click id per conversion (Google's samples set exactly one; gbraid with wbraid is refused by click
 * uploads as GBRAID_WBRAID_BOTH_SET). The gclid wins, as in Google's samples; then gbraid, then wbraid.
 */
export function clickIdOf(event: ConversionEvent): { gclid?: string, gbraid?: string, wbraid?: string } {
  const { gclid, gbraid, wbraid } = event.clickIds
  if (gclid) return { gclid }
  if (gbraid) return { gbraid }
  if (wbraid) return { wbraid }
  return {}
}

/**
 * Hashed email (Google's normalisation: gmail dots removed) and phone (E.164 with "+"). Only well-formed digests
 * leave, never anything else, and none when the person denied ad user data.
 */
export function hashedIdentifiers(event: ConversionEvent): { email?: string, phone?: string } {
  if (event.consent.adUserData === 'denied') return {}
  const { emailGoogle, phoneE164 } = event.identity
  return { ...(isSha256Hex(emailGoogle) ? { email: emailGoogle } : {}), ...(isSha256Hex(phoneE164) ? { phone: phoneE164 } : {}) }
}

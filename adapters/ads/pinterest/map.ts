/**
 * Pure mapping of conversions to one Pinterest Conversions API call: POST {base}/v5/ad_accounts/{id}/events
 * (`?test=true` in test mode) with a JSON body `{ data: [events] }`. Personal data arrives hashed (core/identity);
 * this file only places it under Pinterest's keys. Decisions and sources: README.md.
 */
import type { Channel, ConversionEvent, HashedIdentity, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import { sha256Hex } from '../../../core/identity/hash.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { PINTEREST_API_VERSION } from './version.ts'

export const PINTEREST_API_URL = 'https://api.pinterest.com'

/**
 * The `event_name` values of the API reference (`events/create`, v5 OpenAPI 5.23.0, read 2026-11-28): "Please use the
 * right event_name; otherwise the event will not be accepted". Names only the guide's table shows (schedule, contact,
 * start_trial…) are not among them (README "Event names").
 */
export const PINTEREST_EVENT_NAMES = [
  'add_payment_info', 'add_to_cart', 'add_to_wishlist', 'app_install', 'checkout', 'custom', 'initiate_checkout',
  'lead', 'page_visit', 'search', 'signup', 'subscribe', 'view_category', 'view_content', 'watch_video',
] as const
export type PinterestEventName = typeof PINTEREST_EVENT_NAMES[number]

/** What each standard event is sent as unless a site overrides it; no reference name means a booking, so Schedule is `custom`. */
export const DEFAULT_EVENT_NAMES = {
  Purchase: 'checkout',
  Lead: 'lead',
  CompleteRegistration: 'signup',
  Schedule: 'custom',
} as const satisfies Record<StandardEvent, PinterestEventName>

/** One site's Pinterest options, as the schema in index.ts resolves them. */
export interface PinterestOptions {
  /** The ad account the conversion token belongs to, digits only (at most 18). */
  adAccountId: string
  /** Conversion access token from Ads Manager; sent as `Authorization: Bearer`. */
  accessToken: string
  /** `?test=true`: Pinterest validates and answers as usual but records nothing. */
  testMode?: boolean
  /** Overrides of DEFAULT_EVENT_NAMES; `false` means "do not send this standard event to Pinterest". */
  eventNames?: Partial<Record<StandardEvent, PinterestEventName | false>>
  /** Stands in for https://api.pinterest.com (a proxy or a fake), without a trailing slash. */
  baseUrl?: string
}

/** Where a conversion happened, in Pinterest's `action_source` words. BOPIS is ordered on the website. */
export const ACTION_SOURCE = {
  online: 'web',
  in_store: 'offline',
  phone: 'offline',
  bopis: 'web',
} as const satisfies Record<Channel, string>

/** Pinterest's hashed user_data keys and the HashedIdentity variant each one takes (all arrays). */
const HASHED_KEYS = [
  { key: 'em', field: 'email' },
  { key: 'ph', field: 'phoneDigits' },
  { key: 'fn', field: 'firstName' },
  { key: 'ln', field: 'lastName' },
  { key: 'ct', field: 'city' },
  { key: 'st', field: 'state' },
  { key: 'zp', field: 'zip' },
  { key: 'country', field: 'country' },
  { key: 'external_id', field: 'externalId' },
] as const satisfies readonly { key: string, field: keyof HashedIdentity }[]

export function toPinterestRequest(events: readonly ConversionEvent[], options: PinterestOptions): PlatformRequest {
  const base = (options.baseUrl ?? PINTEREST_API_URL).replace(/\/+$/, '')
  const data = events.map((event) => toServerEvent(event, options))
  return {
    url: `${base}/${PINTEREST_API_VERSION}/ad_accounts/${encodeURIComponent(options.adAccountId)}/events${options.testMode ? '?test=true' : ''}`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${options.accessToken}` },
    body: JSON.stringify({ data }),
  }
}

/** Why Pinterest will not take this event at all, or undefined when it will. */
export function skipReason(event: ConversionEvent, options: PinterestOptions): string | undefined {
  if (!eventNameFor(event.standardEvent, options)) return `this site does not send ${event.standardEvent} to Pinterest (eventNames.${event.standardEvent} is false)`
  // Pinterest requires `em`, `hashed_maids` (we have none) or the `client_ip_address` + `client_user_agent` pair.
  if (isSha256Hex(event.identity.email) || (event.ip && event.userAgent)) return undefined
  return 'no hashed email and not both IP address and user agent: Pinterest needs em, hashed_maids or the client_ip_address + client_user_agent pair'
}

export function eventNameFor(standardEvent: StandardEvent, options: PinterestOptions): PinterestEventName | undefined {
  const configured = options.eventNames?.[standardEvent]
  if (configured === false) return undefined
  return configured ?? DEFAULT_EVENT_NAMES[standardEvent]
}

// --- internal ---

function toServerEvent(event: ConversionEvent, options: PinterestOptions): Record<string, unknown> {
  const customData = toCustomData(event)
  return {
    // skipReason refuses a standard event the site does not send to Pinterest, so it has a name.
    event_name: eventNameFor(event.standardEvent, options)!,
    action_source: ACTION_SOURCE[event.channel],
    event_time: Math.floor(event.occurredAt.getTime() / 1000),
    event_id: event.messageId,
    ...(event.pageUrl ? { event_source_url: event.pageUrl } : {}),
    // adPersonalization denied → the visitor opted out of tracking; unknown is not an opt-out.
    opt_out: event.consent.adPersonalization === 'denied',
    user_data: toUserData(event),
    ...(Object.keys(customData).length > 0 ? { custom_data: customData } : {}),
  }
}

/** Hashed keys as one-element arrays; anything not a SHA-256 digest is left out. IP, browser and epik go plain. */
function toUserData(event: ConversionEvent): Record<string, string | string[]> {
  const userData: Record<string, string | string[]> = {}
  for (const { key, field } of HASHED_KEYS) {
    const value = event.identity[field]
    if (isSha256Hex(value)) userData[key] = [value]
  }
  if (event.ip) userData.client_ip_address = event.ip
  if (event.userAgent) userData.client_user_agent = event.userAgent
  if (event.clickIds.epik) userData.click_id = event.clickIds.epik
  return { ...residenceForLdp(event), ...userData }
}

/**
 * With the LDP flag Pinterest asks for the user's state of residency (`st`) and `country`, hashed like any user_data.
 * The person's own address (identity) wins; else the opt-out's state and country, lower case as Pinterest's schema
 * asks. A state without a country is a US state: limitedDataUse is only set under a US state law.
 */
function residenceForLdp(event: ConversionEvent): Record<string, string[]> {
  const optOut = event.limitedDataUse
  if (!optOut) return {}
  const state = optOut.state?.trim().toLowerCase()
  const country = optOut.country?.trim().toLowerCase() ?? (state ? 'us' : undefined)
  return {
    ...(state ? { st: [sha256Hex(state)] } : {}),
    ...(country ? { country: [sha256Hex(country)] } : {}),
  }
}

/** Pinterest takes value and item prices as strings; a value without a currency uses the ad account's currency. */
function toCustomData(event: ConversionEvent): Record<string, unknown> {
  const customData: Record<string, unknown> = {}
  if (event.currency) customData.currency = event.currency
  if (event.value !== undefined) customData.value = String(event.value)
  if (event.orderId) customData.order_id = event.orderId
  const contents = event.items.flatMap((item) => {
    const id = item.sku ?? item.product_id
    if (!id) return []
    return [{
      id,
      ...(item.price === undefined ? {} : { item_price: String(item.price) }),
      quantity: item.quantity ?? 1,
      ...(item.name ? { item_name: item.name } : {}),
      ...(item.category ? { item_category: item.category } : {}),
      ...(item.brand ? { item_brand: item.brand } : {}),
    }]
  })
  if (contents.length > 0) {
    customData.content_ids = contents.map((content) => content.id)
    customData.contents = contents
    customData.num_items = event.items.reduce((sum, item) => sum + (item.quantity ?? 1), 0)
  }
  // A US state opt-out, or adUserData denied → Limited Data Processing: Pinterest acts as a processor for users a
  // US state law covers.
  if (event.limitedDataUse || event.consent.adUserData === 'denied') customData.opt_out_type = 'LDP'
  return customData
}

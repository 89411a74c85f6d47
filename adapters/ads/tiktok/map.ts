/**
 * Pure mapping of conversions to one Events API 2.0 call: POST {base}/open_api/v1.3/event/track/ with a JSON body
 * `{ event_source, event_source_id, test_event_code?, data: [events] }` and the token in the `Access-Token` header.
 * The core batches each event source apart (event-source.ts), so one call carries one source. Personal data arrives hashed (core/identity); this file only places it under TikTok's keys.
 * Field rules, sources and decisions: README.md.
 */
import type { ConversionEvent, ConversionItem, HashedIdentity, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { isTikTokCurrency } from './currencies.ts'
import { USER_KEYS_BY_SOURCE, eventSourceIdOf, eventSourceOf, offlineOrCrmSkipReason, type TikTokEventSource } from './event-source.ts'
import { TIKTOK_API_VERSION } from './version.ts'

export const TIKTOK_API_URL = 'https://business-api.tiktok.com'

/**
 * TikTok's standard event for each of ours. TikTok renamed CompletePayment to Purchase (and SubmitForm to Lead) and
 * still accepts the old names; a site whose pixel fires CompletePayment sets `events.Purchase` to match it.
 */
export const DEFAULT_EVENTS = {
  Purchase: 'Purchase',
  Lead: 'Lead',
  CompleteRegistration: 'CompleteRegistration',
  Schedule: 'Schedule',
} as const satisfies Record<StandardEvent, string>

/** The TikTok event each standard event is sent as; null turns that event off for TikTok. */
export type TikTokEventMapping = Record<StandardEvent, string | null>

/** One site's TikTok options, as the schema in index.ts resolves them. */
export interface TikTokOptions {
  /** The pixel code (letters and digits, e.g. "CXXXXXXXXXXXXXXXXXXX"), sent as `event_source_id`. */
  pixelCode: string
  /** Long-lived Events API token from the pixel's settings; sent in the `Access-Token` header. */
  accessToken: string
  /** The Offline Event Set that takes sales in a store or by phone (`event_source: "offline"`); without it they are skipped. */
  offlineEventSetId?: string
  /** The CRM Event Set that takes leads from TikTok's lead forms as they progress (`event_source: "crm"`). */
  crmEventSetId?: string
  /** Routes events to Events Manager → Test events instead of live data. */
  testEventCode?: string
  events: TikTokEventMapping
  /** Stands in for https://business-api.tiktok.com (a proxy or a fake), without a trailing slash. */
  baseUrl?: string
}

/** TikTok's hashed `user` keys and the HashedIdentity variant each takes (email trimmed + lowercased, phone E.164 with +). */
const HASHED_USER_KEYS = [
  { key: 'email', field: 'email' },
  { key: 'phone', field: 'phoneE164' },
  { key: 'external_id', field: 'externalId' },
] as const satisfies readonly { key: string, field: keyof HashedIdentity }[]

export function toTrackRequest(events: readonly ConversionEvent[], options: TikTokOptions): PlatformRequest {
  const base = (options.baseUrl ?? TIKTOK_API_URL).replace(/\/+$/, '')
  // One source per request: the core never batches events of different sources together (requestGroup).
  const source = events[0] ? eventSourceOf(events[0], options) : 'web'
  const body = {
    event_source: source,
    event_source_id: eventSourceIdOf(source, options),
    ...(options.testEventCode ? { test_event_code: options.testEventCode } : {}),
    data: events.map((event) => toTrackEvent(event, source, options.events)),
  }
  return {
    url: `${base}/open_api/${TIKTOK_API_VERSION}/event/track/`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Access-Token': options.accessToken },
    body: JSON.stringify(body),
  }
}

/** Why TikTok should not get this event at all, or undefined when it should. */
export function skipReason(event: ConversionEvent, options: TikTokOptions): string | undefined {
  if (!options.events[event.standardEvent]) return `events.${event.standardEvent} is null in the tiktok destination, so ${event.standardEvent} conversions are not sent to TikTok`
  const source = eventSourceOf(event, options)
  if (source !== 'web') {
    const reason = offlineOrCrmSkipReason(event, source, options, limitedDataUse(event))
    if (reason) return reason
    if (Object.keys(toUser(event, source)).length === 0) return `no hashed email${source === 'crm' ? ', phone or external id' : ' or phone'}: TikTok matches ${source === 'crm' ? 'a CRM' : 'an offline'} event by those only`
    return undefined
  }
  // TikTok requires `page` on web events (README "Event sources").
  if (!event.pageUrl) return 'no page URL: TikTok requires page.url on a website event (give the conversion page.url, or set the site\'s domains so dcgate can use the site\'s URL)'
  if (Object.keys(toUser(event, source)).length === 0) return 'no ttclid, hashed email, phone or external id, IP address or user agent for TikTok to match the conversion to a person'
  return undefined
}

// --- internal ---

function toTrackEvent(event: ConversionEvent, source: TikTokEventSource, mapping: TikTokEventMapping): Record<string, unknown> {
  const user = toUser(event, source)
  const properties = toProperties(event)
  const web = source === 'web'
  return {
    // CRM events take custom names only: the site's own event key, the CRM stage. Otherwise the mapped standard
    // event (skipReason refuses one turned off, so it has a name).
    event: source === 'crm' ? event.event : mapping[event.standardEvent]!,
    event_time: Math.floor(event.occurredAt.getTime() / 1000),
    // TikTok deduplicates on event_source_id + event + event_id, against the pixel too, for 48 hours.
    event_id: event.messageId,
    ...(Object.keys(user).length > 0 ? { user } : {}),
    ...(Object.keys(properties).length > 0 ? { properties } : {}),
    // Required on web events; skipReason keeps events without a page URL out of the request.
    ...(web && event.pageUrl ? { page: { url: event.pageUrl } } : {}),
    // TikTok's only privacy field, on web events only: process the event under Limited Data Use. No country or state.
    ...(web && limitedDataUse(event) ? { limited_data_use: true } : {}),
    // Required on CRM events: TikTok's own id of the lead, and the system it comes through.
    ...(source === 'crm' ? { lead: { lead_id: event.clickIds.tt_lead_id, lead_event_source: 'dcgate' } } : {}),
  }
}

/** A US state opt-out of sale or sharing, or ad-user-data consent denied (README "Consent and US privacy"). */
function limitedDataUse(event: ConversionEvent): boolean {
  return event.limitedDataUse !== undefined || event.consent.adUserData === 'denied'
}

/**
 * Hashed keys as plain strings (TikTok takes a string or an array); anything not a SHA-256 digest is left out. Only
 * the keys the reference lets the event's source carry.
 */
function toUser(event: ConversionEvent, source: TikTokEventSource): Record<string, string> {
  const allowed: readonly string[] = USER_KEYS_BY_SOURCE[source]
  const user: Record<string, string> = {}
  if (event.clickIds.ttclid && allowed.includes('ttclid')) user.ttclid = event.clickIds.ttclid
  for (const { key, field } of HASHED_USER_KEYS) {
    const value = event.identity[field]
    if (isSha256Hex(value) && allowed.includes(key)) user[key] = value
  }
  if (event.ip && allowed.includes('ip')) user.ip = event.ip
  if (event.userAgent && allowed.includes('user_agent')) user.user_agent = event.userAgent
  return user
}

function toProperties(event: ConversionEvent): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  // A value needs a currency TikTok lists; otherwise the value is left out rather than failing the event.
  if (event.value !== undefined && event.currency && isTikTokCurrency(event.currency)) {
    properties.value = event.value
    properties.currency = event.currency
  }
  if (event.orderId) properties.order_id = event.orderId
  const contents = event.items.flatMap(toContent)
  if (contents.length > 0) {
    properties.contents = contents
    properties.content_type = 'product'
    properties.num_items = event.items.reduce((sum, item) => sum + (item.quantity ?? 1), 0)
  }
  return properties
}

/** An item as a TikTok content; the SKU is the id TikTok's catalogue matches on, else the product id. */
function toContent(item: ConversionItem): Record<string, unknown>[] {
  const id = item.sku ?? item.product_id
  if (!id) return []
  return [{
    content_id: id,
    ...(item.name ? { content_name: item.name } : {}),
    ...(item.category ? { content_category: item.category } : {}),
    ...(item.brand ? { brand: item.brand } : {}),
    quantity: item.quantity ?? 1,
    ...(item.price === undefined ? {} : { price: item.price }),
  }]
}

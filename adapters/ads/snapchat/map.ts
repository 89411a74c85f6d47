/**
 * Pure mapping of conversions to one Conversions API v3 call: POST {base}/v3/{pixelId}/events?access_token=… (or
 * /events/validate in test mode) with `{ data: [...] }`. Personal data arrives hashed (core/identity) in the forms
 * Snap documents; the IP address and user agent go raw, as Snap asks. Decisions and sources: README.md.
 */
import type { Channel, ConversionEvent, PlatformRequest } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { snapEventFor, type SnapEventMapping } from './events.ts'
import { SNAPCHAT_API_VERSION } from './version.ts'

export const SNAPCHAT_API_URL = 'https://tr.snapchat.com'

/** One site's Snapchat options, as the schema in index.ts resolves them. */
export interface SnapchatOptions {
  /** The Snap Pixel id (a UUID, Ads Manager → Events Manager). */
  pixelId: string
  /** The Conversions API token made for that pixel; sent as the `access_token` query parameter, as Snap documents. */
  accessToken: string
  /** Post to `/events/validate`: Snap checks the events and records none. */
  testMode?: boolean
  /** Overrides of the standard-event → Snap-event mapping (events.ts DEFAULT_EVENTS). */
  events?: SnapEventMapping
  /** Stands in for https://tr.snapchat.com (a proxy or a fake), without a trailing slash. */
  baseUrl?: string
}

/** Snap's `action_source`: WEB, MOBILE_APP or OFFLINE. A BOPIS order is placed on the website. */
export const ACTION_SOURCE = { online: 'WEB', in_store: 'OFFLINE', phone: 'OFFLINE', bopis: 'WEB' } as const satisfies Record<Channel, string>

/** Snap asks a WEB event for its page (`event_source_url`); an online sale without one is told as OFFLINE (README). */
export function actionSourceOf(event: ConversionEvent): 'WEB' | 'OFFLINE' {
  const source = ACTION_SOURCE[event.channel]
  return source === 'WEB' && !event.pageUrl ? 'OFFLINE' : source
}

export function toSnapchatRequest(events: readonly ConversionEvent[], options: SnapchatOptions): PlatformRequest {
  const base = (options.baseUrl ?? SNAPCHAT_API_URL).replace(/\/+$/, '')
  const path = `/${SNAPCHAT_API_VERSION}/${encodeURIComponent(options.pixelId)}/events${options.testMode ? '/validate' : ''}`
  return {
    url: `${base}${path}?${new URLSearchParams({ access_token: options.accessToken })}`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ data: events.map((event) => toSnapEvent(event, options)) }),
  }
}

/** Why Snapchat cannot take the event: switched off, or nothing Snap matches a person by ("Insufficient PII"). */
export function skipReason(event: ConversionEvent, options: SnapchatOptions): string | undefined {
  if (!snapEventFor(event.standardEvent, options.events)) return `the snapchat destination is configured not to send ${event.standardEvent} (events.${event.standardEvent}: false)`
  const user = toUserData(event)
  if (user.sc_click_id || user.sc_cookie1 || user.em || user.ph || user.external_id || (user.client_ip_address && user.client_user_agent)) return undefined
  return 'no match key for Snapchat: no ScCid click id, _scid cookie, hashed email, phone or external id, or IP address with user agent'
}

// --- internal ---

function toSnapEvent(event: ConversionEvent, options: SnapchatOptions): Record<string, unknown> {
  const actionSource = actionSourceOf(event)
  return {
    // skipReason refuses a switched-off standard event, so it has a Snap event.
    event_name: snapEventFor(event.standardEvent, options.events)!,
    event_time: Math.floor(event.occurredAt.getTime() / 1000),
    event_id: event.messageId,
    action_source: actionSource,
    ...(actionSource === 'WEB' ? { event_source_url: event.pageUrl } : {}),
    user_data: toUserData(event),
    custom_data: toCustomData(event),
  }
}

type UserData = Partial<Record<'em' | 'ph' | 'fn' | 'ln' | 'ct' | 'st' | 'zp' | 'country', string[]>>
  & Partial<Record<'external_id' | 'client_ip_address' | 'client_user_agent' | 'sc_click_id' | 'sc_cookie1', string>>

/**
 * Match keys in Snap's forms: email trimmed and lower case, phone digits with the country code and no "+"
 * (core's phoneDigits), names and address fields lower case, each SHA-256; click id, cookie, IP and user agent raw.
 * A sale in a store carries no browser ids. Denied ad_user_data keeps the personal data back.
 */
function toUserData(event: ConversionEvent): UserData {
  const { identity } = event
  const online = event.channel !== 'in_store'
  const user: UserData = {}
  if (event.consent.adUserData !== 'denied') {
    const hashed = { em: identity.email, ph: identity.phoneDigits, fn: identity.firstName, ln: identity.lastName, ct: identity.city, st: identity.state, zp: identity.zip, country: identity.country }
    for (const [key, value] of Object.entries(hashed)) if (isSha256Hex(value)) user[key as keyof typeof hashed] = [value]
    if (isSha256Hex(identity.externalId)) user.external_id = identity.externalId
  }
  if (online) {
    if (event.clickIds.ScCid) user.sc_click_id = event.clickIds.ScCid
    if (event.clickIds.scid) user.sc_cookie1 = event.clickIds.scid
    if (event.ip?.trim()) user.client_ip_address = event.ip.trim()
    if (event.userAgent) user.client_user_agent = event.userAgent
  }
  return user
}

function toCustomData(event: ConversionEvent): Record<string, unknown> {
  const data: Record<string, unknown> = {}
  // Snap refuses a PURCHASE with a value but no currency ("Missing price and/or currency"): both or neither.
  if (event.value !== undefined && event.currency) Object.assign(data, { value: event.value, currency: event.currency })
  if (event.orderId) data.order_id = event.orderId
  const contents = event.items.flatMap((item) => {
    const id = item.sku ?? item.product_id
    if (!id) return []
    return [{ id, quantity: item.quantity ?? 1, ...(item.price === undefined ? {} : { item_price: item.price }), ...(item.brand ? { brand: item.brand } : {}) }]
  })
  if (contents.length > 0) {
    data.contents = contents
    data.num_items = contents.reduce((sum, item) => sum + item.quantity, 0)
  }
  return data
}

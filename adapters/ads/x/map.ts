/**
 * Pure mapping of conversions to one X Conversions API call: POST {base}/{version}/measurement/conversions/{pixelId}
 * with a JSON body `{ conversions: [...] }`. The OAuth 1.0a header is added by auth.ts (it needs a nonce and the
 * clock). Personal data arrives hashed (core/identity); this file only places it under X's keys. Decisions: README.md.
 */
import type { ConversionEvent, ConversionItem, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { X_ADS_API_VERSION } from './version.ts'

export const X_ADS_API_URL = 'https://ads-api.x.com'

/** One X event id (`o87ne` or `tw-o8z6j-o87ne`) per standard event; a standard event without one is not sent. */
export type XEventIds = Partial<Record<StandardEvent, string>>

/** One site's X options, as the schema in index.ts resolves them. */
export interface XOptions {
  /** The X app's API key and secret (OAuth 1.0a consumer). */
  consumerKey: string
  consumerSecret: string
  /** A user access token and secret for a handle with AD_MANAGER or ACCOUNT_ADMIN on the ad account. */
  accessToken: string
  accessTokenSecret: string
  /** The pixel (base tag) id from Events Manager, base36, e.g. `o8z6j`. */
  pixelId: string
  events: XEventIds
  /** Test mode: every conversion goes to this event instead of its mapped one (X has no test flag). */
  testEventId?: string
  /** Stands in for https://ads-api.x.com (a proxy or a fake), without a trailing slash. */
  baseUrl: string
}

/** One identifier object; X takes several per conversion and matches on any of them. */
export interface XIdentifier {
  twclid?: string
  hashed_email?: string
  hashed_phone_number?: string
  ip_address?: string
  user_agent?: string
}

export interface XContent {
  content_id?: string
  content_name?: string
  content_type?: string
  content_price?: number
  num_items?: number
}

export interface XConversion {
  conversion_time: string
  event_id: string
  identifiers: XIdentifier[]
  conversion_id: string
  value?: number
  price_currency?: string
  number_items?: number
  contents?: XContent[]
}

/** The endpoint, built the same way for the request and for its OAuth signature. */
export function conversionsUrl(options: Pick<XOptions, 'baseUrl' | 'pixelId'>): string {
  return `${options.baseUrl.replace(/\/+$/, '')}/${X_ADS_API_VERSION}/measurement/conversions/${encodeURIComponent(options.pixelId)}`
}

/** Every event given: skipReason has kept out those X could not take (X refuses a request as a whole). */
export function toXRequest(events: readonly ConversionEvent[], options: XOptions): PlatformRequest {
  const conversions = events.map((event) => toConversion(event, options))
  return {
    url: conversionsUrl(options),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ conversions }),
  }
}

export function toConversion(event: ConversionEvent, options: XOptions): XConversion {
  const contents = toContents(event.items)
  const numberItems = event.items.reduce((sum, item) => sum + (item.quantity ?? 1), 0)
  return {
    // Date#toISOString is exactly X's "yyyy-MM-ddTHH:mm:ss.SSSZ".
    conversion_time: event.occurredAt.toISOString(),
    // skipReason refuses a standard event without an X event id, so there is one.
    event_id: eventIdFor(event.standardEvent, options)!,
    identifiers: toIdentifiers(event),
    conversion_id: event.messageId,
    // X assumes USD without a currency, so a value without one is left out rather than sent in the wrong currency.
    ...(event.value !== undefined && event.currency ? { value: event.value, price_currency: event.currency } : {}),
    ...(event.items.length > 0 && Number.isInteger(numberItems) && numberItems > 0 ? { number_items: numberItems } : {}),
    ...(contents.length > 0 ? { contents } : {}),
  }
}

/** The event id a standard event goes to: the test event in test mode, else its mapped event, else none. */
export function eventIdFor(standardEvent: StandardEvent, options: Pick<XOptions, 'events' | 'testEventId'>): string | undefined {
  const mapped = options.events[standardEvent]
  return mapped ? options.testEventId ?? mapped : undefined
}

/** Why X will not take this event at all (no event id for it, a US opt-out, nothing to match it by), or undefined when it will. */
export function skipReason(event: ConversionEvent, options: XOptions): string | undefined {
  if (!options.events[event.standardEvent]) {
    return `no X event id is configured for ${event.standardEvent} (set events.${event.standardEvent} in the x destination)`
  }
  if (event.limitedDataUse) {
    return 'the person opted out of the sale or sharing of their data under a US state law, and X asks senders to filter out the conversions of such people (it has no limited-data-use signal)'
  }
  if (toIdentifiers(event).length > 0) return undefined
  if (event.consent.adUserData === 'denied' && (isSha256Hex(event.identity.email) || isSha256Hex(event.identity.phoneE164))) {
    return 'no twclid, and the visitor denied ad user data, so no hashed email or phone number may go to X'
  }
  return 'no twclid, hashed email or hashed phone number for X to match (an IP address and user agent only count beside one of them)'
}

/**
 * twclid, hashed email (trim + lowercase) and hashed E.164 phone with "+", then IP and user agent together in one
 * object, only beside one of the others. A denial of ad user data keeps everything but the click id back.
 */
export function toIdentifiers(event: ConversionEvent): XIdentifier[] {
  const identifiers: XIdentifier[] = []
  const twclid = event.clickIds.twclid?.trim()
  if (twclid) identifiers.push({ twclid })
  if (event.consent.adUserData === 'denied') return identifiers
  const { email, phoneE164 } = event.identity
  if (isSha256Hex(email)) identifiers.push({ hashed_email: email })
  if (isSha256Hex(phoneE164)) identifiers.push({ hashed_phone_number: phoneE164 })
  const ip = event.ip?.trim()
  const userAgent = event.userAgent?.trim()
  if (identifiers.length > 0 && (ip || userAgent)) {
    identifiers.push({ ...(ip ? { ip_address: ip } : {}), ...(userAgent ? { user_agent: userAgent } : {}) })
  }
  return identifiers
}

// --- internal ---

/** Items as X contents; `content_group_id` is left out (X types it integer but shows strings: README). */
function toContents(items: readonly ConversionItem[]): XContent[] {
  return items.flatMap((item) => {
    const content: XContent = {
      ...(item.sku ?? item.product_id ? { content_id: item.sku ?? item.product_id } : {}),
      ...(item.name ? { content_name: item.name } : {}),
      ...(item.category ? { content_type: item.category } : {}),
      ...(item.price !== undefined ? { content_price: item.price } : {}),
      ...(item.quantity !== undefined && Number.isInteger(item.quantity) && item.quantity > 0 ? { num_items: item.quantity } : {}),
    }
    return Object.keys(content).length > 0 ? [content] : []
  })
}

/**
 * Pure mapping of conversions to one Conversions API call: POST {base}/{version}/{pixelId}/events with a JSON
 * body `{ data: [server events], test_event_code? }`. Personal data arrives hashed (core/identity); this file only
 * places it under Meta's keys. Decisions and sources: README.md.
 */
import type { Channel, ConversionEvent, HashedIdentity, PlatformRequest } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { toMetaClickId } from './click-ids.ts'
import { META_API_VERSION } from './version.ts'

export const META_GRAPH_URL = 'https://graph.facebook.com'

/** One site's Meta options, as the schema in index.ts resolves them. */
export interface MetaOptions {
  /** Pixel (dataset) id from Events Manager, digits only. */
  pixelId: string
  /** System-user access token; sent as `Authorization: Bearer`, never in the URL. */
  accessToken: string
  /** Routes events to Events Manager → Test events instead of live data. */
  testEventCode?: string
  /** Stands in for https://graph.facebook.com (a proxy or a fake), without a trailing slash. */
  baseUrl?: string
}

/**
 * Where a conversion happened, in Meta's `action_source` words. BOPIS is bought on the website. A website event
 * needs `event_source_url` and `client_user_agent` (README.md); one without both is sent as WITHOUT_WEB_CONTEXT.
 */
export const ACTION_SOURCE = {
  online: 'website',
  in_store: 'physical_store',
  phone: 'phone_call',
  bopis: 'website',
} as const satisfies Record<Channel, string>

/** What an online conversion without a page URL or user agent is: recorded by a system, not seen on a page. */
export const WITHOUT_WEB_CONTEXT = 'system_generated'

/** Meta's hashed customer-information keys and the HashedIdentity variant each one takes. */
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

type UserData = Record<string, string | string[]>

/** Meta's lead id: "a 15 or 16-digit number" from the leadgen webhook (Conversion Leads payload specification). */
const LEAD_ID = /^\d{15,17}$/

export function toMetaRequest(events: readonly ConversionEvent[], options: MetaOptions): PlatformRequest {
  const base = (options.baseUrl ?? META_GRAPH_URL).replace(/\/+$/, '')
  const data = events.map(toServerEvent)
  const body = options.testEventCode ? { data, test_event_code: options.testEventCode } : { data }
  return {
    url: `${base}/${META_API_VERSION}/${encodeURIComponent(options.pixelId)}/events`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${options.accessToken}` },
    body: JSON.stringify(body),
  }
}

/**
 * Why Meta cannot take the event, or undefined: Meta refuses a whole request when one event carries no customer
 * information, so such an event is never sent (the delivery records it as skipped with this reason).
 */
export function skipReason(event: ConversionEvent): string | undefined {
  // An IP address or user agent is customer information of itself (toUserData sends either); no need to build the rest.
  if (event.ip || event.userAgent || Object.keys(toUserData(event)).length > 0) return undefined
  return 'the event carries no customer information (email, phone, name, address, external id, IP address, user agent, fbc or fbp) for Meta to match'
}

// --- internal ---

function toServerEvent(event: ConversionEvent): Record<string, unknown> {
  const customData = toCustomData(event)
  return {
    event_name: event.standardEvent,
    event_time: Math.floor(event.occurredAt.getTime() / 1000),
    event_id: event.messageId,
    action_source: actionSource(event),
    ...(event.pageUrl ? { event_source_url: event.pageUrl } : {}),
    user_data: toUserData(event),
    ...(Object.keys(customData).length > 0 ? { custom_data: customData } : {}),
    ...toConsent(event),
  }
}

function actionSource(event: ConversionEvent): string {
  // A lead qualified in a CRM after Meta's 7-day window: a CRM stage update, as Meta's Conversion Leads spec sends it.
  if (event.qualifiedLate) return 'system_generated'
  const source = ACTION_SOURCE[event.channel]
  return source === 'website' && !(event.pageUrl && event.userAgent) ? WITHOUT_WEB_CONTEXT : source
}

/** Hashed keys as one-element arrays (Meta takes a string or an array); anything not a SHA-256 digest is left out. */
function toUserData(event: ConversionEvent): UserData {
  const userData: UserData = {}
  for (const { key, field } of HASHED_KEYS) {
    const value = event.identity[field]
    if (isSha256Hex(value)) userData[key] = [value]
  }
  if (event.ip) userData.client_ip_address = event.ip
  if (event.userAgent) userData.client_user_agent = event.userAgent
  // As Meta's parameter builder passes them on: a malformed fbc or fbp is left out, not sent for Meta to flag.
  const fbc = toMetaClickId(event.clickIds.fbc)
  const fbp = toMetaClickId(event.clickIds.fbp)
  if (fbc) userData.fbc = fbc
  if (fbp) userData.fbp = fbp
  // The Lead Ads lead id, never hashed; as text, because a 16-digit id does not fit a JavaScript number exactly.
  if (event.qualifiedLate && event.clickIds.fb_lead_id && LEAD_ID.test(event.clickIds.fb_lead_id)) userData.lead_id = event.clickIds.fb_lead_id
  return userData
}

function toCustomData(event: ConversionEvent): Record<string, unknown> {
  const customData: Record<string, unknown> = {}
  // Meta requires a currency with a value; a value without one is left out rather than failing the batch.
  if (event.value !== undefined && event.currency) {
    customData.value = event.value
    customData.currency = event.currency
  }
  if (event.orderId) customData.order_id = event.orderId
  const contents = event.items.flatMap((item) => {
    const id = item.sku ?? item.product_id
    if (!id) return []
    return [{ id, quantity: item.quantity ?? 1, ...(item.price === undefined ? {} : { item_price: item.price }) }]
  })
  if (contents.length > 0) {
    customData.contents = contents
    customData.content_type = 'product'
    customData.num_items = event.items.reduce((sum, item) => sum + (item.quantity ?? 1), 0)
  }
  if (event.channel === 'bopis' && event.standardEvent === 'Purchase') customData.delivery_category = 'in_store'
  if (event.qualifiedLate) {
    // Conversion Leads: the CRM as the event's source, and the tool the lead stage came from.
    customData.event_source = 'crm'
    customData.lead_event_source = 'dcgate'
  }
  return customData
}

/**
 * adPersonalization denied → opt_out, so the event counts for attribution but not for ad delivery optimisation.
 * Limited Data Use when the person opted out of sale/sharing under a US state law (`limitedDataUse`), or denied ad
 * user data. Meta takes country 1 (United States) or 0, and state 1000 (California) or 0, where 0 asks Meta to
 * geolocate the event (README "US privacy"). Granted or unknown adds nothing.
 */
function toConsent(event: ConversionEvent): Record<string, unknown> {
  const { consent, limitedDataUse } = event
  const ldu = limitedDataUse ?? (consent.adUserData === 'denied' ? {} : undefined)
  return {
    ...(consent.adPersonalization === 'denied' ? { opt_out: true } : {}),
    ...(ldu ? { data_processing_options: ['LDU'], ...toLduLocation(ldu) } : {}),
  }
}

/** Meta's location codes for Limited Data Use: only the United States (1) and California (1000) have codes of their own. */
export function toLduLocation(where: { country?: string, state?: string }): { data_processing_options_country: 0 | 1, data_processing_options_state: 0 | 1000 } {
  const us = where.country?.toLowerCase() === 'us'
  return {
    data_processing_options_country: us ? 1 : 0,
    data_processing_options_state: us && where.state?.toLowerCase() === 'ca' ? 1000 : 0,
  }
}

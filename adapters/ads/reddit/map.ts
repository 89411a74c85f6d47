/**
 * Pure mapping of conversions to one Conversions API v3 call: POST {base}/api/v3/pixels/{pixelId}/conversion_events
 * with `{ data: { events: [...], test_id? } }`. Personal data arrives hashed (core/identity); only the IP address,
 * which core/identity does not hold hashed, is hashed here. Decisions and sources: README.md.
 */
import type { Channel, ConversionEvent, PlatformRequest } from '../../../core/delivery/types.ts'
import { sha256Hex } from '../../../core/identity/hash.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { redditEventFor, takesItems, takesValue, type RedditEventMapping, type RedditEventType } from './events.ts'
import { REDDIT_API_VERSION } from './version.ts'

export const REDDIT_ADS_API_URL = 'https://ads-api.reddit.com'

/** One site's Reddit options, as the schema in index.ts resolves them. */
export interface RedditOptions {
  /** Pixel id from Events Manager (e.g. `a2_abcd1234`); conversions are posted to this pixel. */
  pixelId: string
  /** Conversion access token from Events Manager → Conversions API; sent as `Authorization: Bearer`. */
  accessToken: string
  /** Event Testing id: routes requests to Events Manager → Event Testing instead of live data. */
  testId?: string
  /** Overrides of the standard-event → Reddit-event mapping (events.ts DEFAULT_EVENTS). */
  events?: RedditEventMapping
  /** Stands in for https://ads-api.reddit.com (a proxy or a fake), without a trailing slash. */
  baseUrl?: string
}

/**
 * Reddit's `action_source`. A BOPIS order is placed on the website; phone sales have no channel of their own. A
 * website event carries the page it happened on (`event_source_url`); an online one without a page URL is `OTHER`
 * rather than an incomplete website event (README "Website events").
 */
export const ACTION_SOURCE = {
  online: 'WEBSITE',
  in_store: 'PHYSICAL_STORE',
  phone: 'OTHER',
  bopis: 'WEBSITE',
} as const satisfies Record<Channel, string>

/** What an online conversion without a page URL is: it happened, but Reddit cannot be told on which page. */
export const WITHOUT_WEB_CONTEXT = 'OTHER'

/** The event's `action_source`: its channel's, except a website event without a page URL. */
export function actionSourceOf(event: ConversionEvent): string {
  const source = ACTION_SOURCE[event.channel]
  return source === 'WEBSITE' && !event.pageUrl ? WITHOUT_WEB_CONTEXT : source
}

/** Reddit's v3 default user agents are throttled ("Your user agent was automatically ratelimited"). */
const USER_AGENT = 'dcgate (Reddit Conversions API adapter)'

export function toRedditRequest(events: readonly ConversionEvent[], options: RedditOptions): PlatformRequest {
  const base = (options.baseUrl ?? REDDIT_ADS_API_URL).replace(/\/+$/, '')
  const data = { events: events.map((event) => toConversionEvent(event, options)), ...(options.testId ? { test_id: options.testId } : {}) }
  return {
    url: `${base}/api/${REDDIT_API_VERSION}/pixels/${encodeURIComponent(options.pixelId)}/conversion_events`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${options.accessToken}`, 'User-Agent': USER_AGENT },
    body: JSON.stringify({ data }),
  }
}

/**
 * Why Reddit cannot take the event at all, or undefined when it can: the event is switched off, or it carries no
 * match key (Reddit requires one per event and refuses the whole request otherwise).
 */
export function skipReason(event: ConversionEvent, options: RedditOptions): string | undefined {
  if (!redditEventFor(event.standardEvent, options.events)) return `the reddit destination is configured not to send ${event.standardEvent} (events.${event.standardEvent}: false)`
  const user = toUser(event)
  if (toClickId(event) || user.email || user.phone_number || user.external_id || (user.ip_address && user.user_agent)) return undefined
  return 'no match key for Reddit: no rdt_cid click id, hashed email, phone or external id, or IP address with user agent'
}

// --- internal ---

function toConversionEvent(event: ConversionEvent, options: RedditOptions): Record<string, unknown> {
  // skipReason refuses a switched-off standard event, so it has a Reddit event.
  const type = redditEventFor(event.standardEvent, options.events)!
  const actionSource = actionSourceOf(event)
  const clickId = toClickId(event)
  return {
    event_at: event.occurredAt.getTime(),
    action_source: actionSource,
    type,
    ...(clickId ? { click_id: clickId } : {}),
    ...(event.pageUrl && actionSource === 'WEBSITE' ? { event_source_url: event.pageUrl } : {}),
    metadata: toMetadata(event, type),
    user: toUser(event),
  }
}

/** The Reddit click id, raw. Reddit asks offline (physical store) events to carry no click or device ids. */
function toClickId(event: ConversionEvent): string | undefined {
  return event.channel === 'in_store' ? undefined : event.clickIds.rdt_cid || undefined
}

function toMetadata(event: ConversionEvent, type: RedditEventType): Record<string, unknown> {
  const metadata: Record<string, unknown> = { conversion_id: event.messageId }
  // v3 `value` is a double in the currency's base unit; Reddit cannot read a value without its currency.
  if (takesValue(type) && event.value !== undefined && event.currency) {
    metadata.value = event.value
    metadata.currency = event.currency
  }
  const products = event.items.flatMap((item) => {
    const id = item.sku ?? item.product_id
    if (!id) return []
    return [{
      id,
      ...(item.name ? { name: item.name } : {}),
      ...(item.category ? { category: item.category } : {}),
      quantity: item.quantity ?? 1,
      ...(item.price === undefined ? {} : { item_price: item.price }),
    }]
  })
  if (takesItems(type) && event.items.length > 0) {
    metadata.item_count = event.items.reduce((sum, item) => sum + (item.quantity ?? 1), 0)
    if (products.length > 0) metadata.products = products
  }
  return metadata
}

/** Limited Data Use, with the person's country (`US`) and region (`US-CA`) when known. */
interface DataProcessingOptions { modes: ['LDU'], country?: string, region?: string }

type User = Partial<Record<'email' | 'phone_number' | 'external_id' | 'ip_address' | 'user_agent', string>> & {
  data_processing_options?: DataProcessingOptions
}

/**
 * Match keys: email in Reddit's canonical form, phone E.164 with "+", external id, each already SHA-256; the IP
 * hashed here, the user agent raw. Offline events carry no device ids. Denied consent → Limited Data Use.
 */
function toUser(event: ConversionEvent): User {
  const { emailReddit, phoneE164, externalId } = event.identity
  const online = event.channel !== 'in_store'
  const user: User = {}
  if (isSha256Hex(emailReddit)) user.email = emailReddit
  if (isSha256Hex(phoneE164)) user.phone_number = phoneE164
  if (isSha256Hex(externalId)) user.external_id = externalId
  if (online && event.ip?.trim()) user.ip_address = sha256Hex(event.ip.trim().toLowerCase())
  if (online && event.userAgent) user.user_agent = event.userAgent
  const ldu = toDataProcessingOptions(event)
  if (ldu) user.data_processing_options = ldu
  return user
}

/**
 * LDU for a US state opt-out (`limitedDataUse`), with Reddit's `country: "US"` and `region: "US-CA"` when known, or for
 * denied consent. A state without a country is a US state: `limitedDataUse` is only set under a US state law.
 */
function toDataProcessingOptions(event: ConversionEvent): DataProcessingOptions | undefined {
  const optOut = event.limitedDataUse
  if (optOut) {
    const country = (optOut.country ?? (optOut.state ? 'us' : undefined))?.toUpperCase()
    const region = country && optOut.state ? `${country}-${optOut.state.toUpperCase()}` : undefined
    return { modes: ['LDU'], ...(country ? { country } : {}), ...(region ? { region } : {}) }
  }
  if (event.consent.adUserData === 'denied' || event.consent.adPersonalization === 'denied') return { modes: ['LDU'] }
  return undefined
}

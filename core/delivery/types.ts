/**
 * The shapes adapters exchange with the delivery pipeline. Adapters are pure mappings between a
 * ConversionEvent and a platform's HTTP request/response; the pipeline does all I/O, batching and retries.
 */
import type { STANDARD_EVENTS } from '../config/schema.ts'
import type { ConsentPurposes } from '../consent/purposes.ts'
import type { IdentityTraits } from '../identity/hash.ts'

export type StandardEvent = typeof STANDARD_EVENTS[number]
export type Confirmation = 'payment_confirmed' | 'crm_qualified' | 'tracked'
export type Channel = 'online' | 'in_store' | 'phone' | 'bopis'
export type ConsentState = 'granted' | 'denied' | 'unknown'

/**
 * SHA-256 (lowercase hex) of normalised personal data, one field per normalisation a platform asks for.
 * Built once at intake by core/identity; nothing here is plain text, so it may be stored and retried.
 */
export interface HashedIdentity {
  /** trim + lowercase */
  email?: string
  /** trim + lowercase, and for gmail.com/googlemail.com dots removed from the local part (Google's rule) */
  emailGoogle?: string
  /** trim + lowercase, every dot and any +alias removed from the local part (Microsoft UET CAPI) */
  emailMicrosoft?: string
  /** trim + lowercase, +alias removed, then every non-letter/digit removed from the local part (Reddit) */
  emailReddit?: string
  /** E.164 with the leading + (Google, TikTok, X) */
  phoneE164?: string
  /** E.164 digits without the + (Meta, Pinterest) */
  phoneDigits?: string
  /** lowercase, no punctuation or spaces */
  firstName?: string
  lastName?: string
  city?: string
  /** two-letter code when one exists, lowercase */
  state?: string
  /** lowercase, no spaces; US: first 5 digits */
  zip?: string
  /** ISO 3166-1 alpha-2, lowercase */
  country?: string
  /** the integrator's own user id (userId / customer_id) */
  externalId?: string
}

/** Click and browser ids, as received or recovered from earlier visits. Not personal data in themselves. */
export interface ClickIds {
  gclid?: string
  gbraid?: string
  wbraid?: string
  fbc?: string
  fbp?: string
  ttclid?: string
  li_fat_id?: string
  msclkid?: string
  /** The Microsoft UET tag's visitor id (its `_uetvid` cookie), sent to Microsoft as `anonymousId`. */
  uetvid?: string
  /** The GA tag's client id from its `_ga` cookie (`GA1.1.<a>.<b>` → `<a>.<b>`), sent to GA4 as `client_id`. */
  ga?: string
  /** The GA tag's session from its `_ga_<container>` cookie, as `<container>.<session id>`, sent to that stream as `session_id`. */
  ga_session?: string
  rdt_cid?: string
  epik?: string
  twclid?: string
  ScCid?: string
  /** The Snap Pixel's browser id (its `_scid` cookie), sent to Snapchat as `sc_cookie1`. */
  scid?: string
  /** Meta's Lead Ads lead id (`leadgen_id`, 15-17 digits), given by the integrator; sent with a CRM-qualified lead. */
  fb_lead_id?: string
  /** TikTok's id of a lead its lead form collected, given by the integrator; the lead then goes to TikTok as a CRM event. */
  tt_lead_id?: string
}

export interface ConversionItem {
  sku?: string
  product_id?: string
  name?: string
  category?: string
  brand?: string
  quantity?: number
  price?: number
  currency?: string
}

/** A conversion ready for delivery: everything an adapter may put in a platform's request. */
export interface ConversionEvent {
  /**
   * The id every adapter sends as the platform's dedup key: the messageId as given, for a public conversion too, so
   * it deduplicates with the site's own pixel and tag (core/delivery/trust.ts).
   */
  messageId: string
  siteId: string
  /** The site's event key as received. */
  event: string
  /** The standard conversion it is delivered as. */
  standardEvent: StandardEvent
  occurredAt: Date
  value?: number
  /** ISO 4217, upper case */
  currency?: string
  orderId?: string
  items: ConversionItem[]
  channel: Channel
  identity: HashedIdentity
  clickIds: ClickIds
  /** The buyer's IP and browser, sent unhashed where a platform asks for them (Meta). */
  ip?: string
  userAgent?: string
  /** The page the conversion happened on, when known. */
  pageUrl?: string
  /** Personal fields the platform takes in clear (LinkedIn's userInfo, Google's address), when an adapter asked for them. */
  clear?: ClearTraits
  /**
   * Consent Mode's ad_user_data and ad_personalization as they applied (core/consent/purposes.ts); `vendorsDenied`:
   * dcgate platform names a TC string refused as vendors, which the outbox records skipped.
   */
  consent: { adUserData: ConsentState, adPersonalization: ConsentState, vendorsDenied?: readonly string[] }
  /**
   * Set when the person opted out of the sale or sharing of their data under a US state law (Global Privacy Control,
   * or the conversion's own consent) and the site's `consent.usPrivacy` is `limited`: the adapter sends the
   * platform's limited-data-use signal (Meta LDU, TikTok limited_data_use, Pinterest opt_out_type LDP…). `country`
   * and `state` (lowercase ISO codes) are given when known; without them the platform geolocates.
   */
  limitedDataUse?: { country?: string, state?: string }
  confirmation: Confirmation
  /**
   * Set for a held lead released after the platform's event-age window had passed (core/delivery/late-lead.ts):
   * `occurredAt` is then the qualification (release) time, and `leadAt` the time the lead itself was made.
   */
  qualifiedLate?: { leadAt: Date }
}

/**
 * Personal fields some platforms take unhashed: LinkedIn's userInfo (names, company, title, country), Google's address
 * (region and postal code in clear beside the hashed names). Stored only for the fields a connected adapter declares
 * in `clearTraits`, and erased with the IP address and user agent (core/delivery/clear-fields.ts). Trimmed, as given.
 */
export interface ClearTraits {
  firstName?: string
  lastName?: string
  company?: string
  title?: string
  postalCode?: string
  /** ISO 3166-1 alpha-2, upper case (the conversion's country, which is kept anyway). */
  countryCode?: string
}
export const CLEAR_TRAIT_NAMES = ['firstName', 'lastName', 'company', 'title', 'postalCode', 'countryCode'] as const satisfies readonly (keyof ClearTraits)[]
export type ClearTraitName = typeof CLEAR_TRAIT_NAMES[number]

/** A refund told to a platform about a conversion it received (core/delivery/adjust.ts). */
export interface ConversionAdjustment {
  /** `retraction`: the whole value was refunded or the order cancelled; `restatement`: part of it, `value` remains. */
  type: 'retraction' | 'restatement'
  /** The vendor's refund id (Shopify refund, Stripe re_…): the row's key, so a refund is sent once per platform. */
  refundId: string
  /** When the refund was made. */
  at: Date
  /** A restatement's value after every refund so far, in `currency`. */
  value?: number
  currency?: string
}

/** What an adapter's adjustment mapping is given: the conversion as it was sent, and the refund. */
export interface AdjustmentEvent {
  conversion: ConversionEvent
  adjustment: ConversionAdjustment
}

/** One HTTP call to a platform, produced by an adapter's pure mapping. */
export interface PlatformRequest {
  url: string
  /** `GET` only for reading a request's status (diagnostics), with an empty body. */
  method: 'POST' | 'PUT' | 'GET'
  headers: Record<string, string>
  body: string
}

/** What the platform answered, as the adapter's parseResponse sees it. */
export interface PlatformResponse {
  status: number
  headers: Headers
  body: string
}

/** What happened to one event at one platform. `message` is the platform's own words where it gave any. */
export type DeliveryOutcome =
  | { status: 'sent' }
  | { status: 'rejected', message: string }
  | { status: 'retry', message: string, retryAfterMs?: number }

/**
 * What a platform says, some time after it took a request, about one event of it (core/delivery/diagnostics.ts):
 * `processing`, look again later; `done`, final, the delivery stays sent and the report shows `note`; `failed`, final,
 * the delivery turns `failed` with the platform's words; `retry`, the status could not be read this time.
 */
export type Diagnosis =
  | { status: 'processing' }
  | { status: 'done', note: string }
  | { status: 'failed', message: string }
  | { status: 'retry', message: string, retryAfterMs?: number }

/** A conversion as received (automation body or a webhook), before hashing, matching and mapping. */
export interface ConversionInput {
  messageId?: string
  /**
   * True when dcgate made `messageId` itself (a pixel hit without an id, an automation body without one), not the
   * sender: such an id cannot be the page's copy of another source's order, so a public one is sent without a grace.
   */
  messageIdGenerated?: boolean
  event: string
  occurredAt?: Date
  userId?: string
  anonymousId?: string
  value?: number
  currency?: string
  orderId?: string
  items?: ConversionItem[]
  channel?: Channel
  /** Plain text; hashed here, never stored in clear. */
  traits?: IdentityTraits
  /** Click ids, customer_id and dc_session_id. */
  identifiers?: Record<string, string | undefined>
  ip?: string
  userAgent?: string
  pageUrl?: string
  /** What was bought or asked for, for the export (properties.content_name / content_category; else the first item's). */
  contentName?: string
  contentCategory?: string
  /** The person's consent per purpose the conversion itself carried (`context.consent`); else a matched visit's applies. */
  consent?: ConsentPurposes
}

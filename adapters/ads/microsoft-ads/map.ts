/**
 * Pure mapping of conversions to one UET Conversions API call: POST {base}/v1/{tagId}/events with the JSON body
 * `{ data: [custom events], continueOnValidationError: true, dataProvider: "dcgate" }`. Personal data arrives
 * hashed (core/identity); this file only places it under Microsoft's keys. Decisions and sources: README.md.
 */
import type { ConsentState, ConversionEvent, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import { isSha256Hex } from '../../shared/helpers.ts'
import { MICROSOFT_ADS_API_VERSION } from './version.ts'
import type { MicrosoftAdjustmentOptions } from './map-adjustments.ts'

export const UET_CAPI_URL = 'https://capi.uet.microsoft.com'
/** Names the sender; Microsoft asks third-party senders to set `dataProvider`. */
export const DATA_PROVIDER = 'dcgate'

/** What a standard event is sent as: the goal's event action, plus its category and label when the goal matches on them. */
export interface UetGoalEvent {
  eventName: string
  eventCategory?: string
  eventLabel?: string
}

/** One site's Microsoft Advertising options, as the schema in index.ts resolves them. */
export interface MicrosoftAdsOptions {
  /** The UET tag id (digits), as text. */
  tagId: string
  /** The tag's Conversions API token; sent as `Authorization: Bearer`. */
  apiToken: string
  /** Each standard event's goal event, or false for a standard event this site does not send to Microsoft. */
  events: Record<StandardEvent, UetGoalEvent | false>
  /** Stands in for https://capi.uet.microsoft.com (a proxy or a fake), without a trailing slash. */
  baseUrl: string
  /** Campaign Management API credentials for refunds; absent or partial, a refund is skipped saying what is missing. */
  adjustments?: MicrosoftAdjustmentOptions
}

/** Defaults (Microsoft names none); each must equal the Action of the advertiser's goal, so sites override them. */
export const DEFAULT_EVENTS = {
  Purchase: { eventName: 'purchase' },
  Lead: { eventName: 'submit_lead_form' },
  CompleteRegistration: { eventName: 'sign_up' },
  Schedule: { eventName: 'book_appointment' },
} as const satisfies Record<StandardEvent, UetGoalEvent>

export interface UetUserData {
  anonymousId?: string
  em?: string
  ph?: string
  externalId?: string
  msclkid?: string
  clientIpAddress?: string
  clientUserAgent?: string
}

export interface UetItem { id: string, quantity?: number, price?: number, name?: string }

export interface UetCustomData {
  eventCategory?: string
  eventLabel?: string
  value?: number
  currency?: string
  transactionId?: string
  items?: UetItem[]
  itemIds?: string[]
  pageType?: 'purchase'
  ecommTotalValue?: number
}

export interface UetEvent {
  eventType: 'custom'
  eventId: string
  eventName: string
  eventTime: number
  eventSourceUrl?: string
  adStorageConsent?: 'G' | 'D'
  userData: UetUserData
  customData?: UetCustomData
}

export interface UetRequestBody {
  data: UetEvent[]
  /** Invalid events are skipped and reported per event instead of failing the whole request. */
  continueOnValidationError: true
  dataProvider: string
}

export function toUetRequest(events: readonly ConversionEvent[], options: MicrosoftAdsOptions): PlatformRequest {
  const base = (options.baseUrl || UET_CAPI_URL).replace(/\/+$/, '')
  const body: UetRequestBody = {
    data: events.map((event) => toUetEvent(event, options)),
    continueOnValidationError: true,
    dataProvider: DATA_PROVIDER,
  }
  return {
    url: `${base}/${MICROSOFT_ADS_API_VERSION}/${encodeURIComponent(options.tagId)}/events`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${options.apiToken}` },
    body: JSON.stringify(body),
  }
}

/**
 * Why Microsoft cannot take the event at all, or undefined. The visitor id alone does not count: the guide says
 * "`vid` alone is not sufficient" for a conversion.
 */
export function skipReason(event: ConversionEvent, options: MicrosoftAdsOptions): string | undefined {
  if (!options.events[event.standardEvent]) {
    return `${event.standardEvent} is turned off for Microsoft Advertising (events.${event.standardEvent} is false)`
  }
  const { em, ph, externalId, msclkid } = toUserData(event)
  if (!em && !ph && !externalId && !msclkid) {
    return event.consent.adUserData === 'denied'
      ? 'no msclkid, and the visitor denied ad user data, so no hashed email, phone or external id may be sent'
      : 'no msclkid, hashed email, hashed phone or external id for Microsoft to match the conversion to'
  }
  return undefined
}

export function toUetEvent(event: ConversionEvent, options: MicrosoftAdsOptions): UetEvent {
  // skipReason refuses a standard event turned off (false), so it has a goal.
  const goal = options.events[event.standardEvent] as UetGoalEvent
  // A US state opt-out of sale/sharing: D, the UET CAPI's only signal that Microsoft may not use the event for ads.
  const consent = event.limitedDataUse ? 'D' : toAdStorageConsent(event.consent)
  const sourceUrl = toSourceUrl(event.pageUrl)
  const customData = toCustomData(event, goal)
  return {
    eventType: 'custom',
    eventId: event.messageId,
    eventName: goal.eventName,
    eventTime: Math.floor(event.occurredAt.getTime() / 1000),
    ...(sourceUrl ? { eventSourceUrl: sourceUrl } : {}),
    ...(consent ? { adStorageConsent: consent } : {}),
    userData: toUserData(event),
    ...(Object.keys(customData).length > 0 ? { customData } : {}),
  }
}

/**
 * Ad user data decides (README "Consent"): denied → `D`, which takes the event out of every advertising use,
 * attribution included; granted → `G`; unknown → left out (Microsoft's default, granted). Ad personalization alone
 * does not: Microsoft has no remarketing-only value, and `D` would also drop the attribution the person allowed.
 */
export function toAdStorageConsent(consent: ConversionEvent['consent']): 'G' | 'D' | undefined {
  const states: Record<ConsentState, 'G' | 'D' | undefined> = { denied: 'D', granted: 'G', unknown: undefined }
  return states[consent.adUserData]
}

/**
 * The visitor id as the guide's `anonymousId`, which "must match the vid" Microsoft knows: the UET tag's `_uetvid`
 * cookie (a v1 UUID without dashes), or the `vid` of a site's own ID-sync pixel. Sent as given; the format is free.
 */
export function toAnonymousId(raw: string | undefined): string | undefined {
  return raw?.trim() || undefined
}

/** The click id as Microsoft appended it to the landing URL; UET's `_uetmsclkid` cookie prefixes it with `_uet`. */
export function toMsclkid(raw: string | undefined): string | undefined {
  const value = raw?.trim().replace(/^_uet/, '')
  return value || undefined
}

/** Hashed identifiers only when ad user data is not denied, and only well-formed digests; click id, IP and browser as given. */
function toUserData(event: ConversionEvent): UetUserData {
  const userData: UetUserData = {}
  if (event.consent.adUserData !== 'denied') {
    const { emailMicrosoft, phoneE164, externalId } = event.identity
    if (isSha256Hex(emailMicrosoft)) userData.em = emailMicrosoft
    if (isSha256Hex(phoneE164)) userData.ph = phoneE164
    if (isSha256Hex(externalId)) userData.externalId = externalId
  }
  const msclkid = toMsclkid(event.clickIds.msclkid)
  if (msclkid) userData.msclkid = msclkid
  const anonymousId = toAnonymousId(event.clickIds.uetvid)
  if (anonymousId) userData.anonymousId = anonymousId
  if (event.ip) userData.clientIpAddress = event.ip
  if (event.userAgent) userData.clientUserAgent = event.userAgent
  return userData
}

function toCustomData(event: ConversionEvent, goal: UetGoalEvent): UetCustomData {
  const customData: UetCustomData = {}
  if (goal.eventCategory) customData.eventCategory = goal.eventCategory
  if (goal.eventLabel) customData.eventLabel = goal.eventLabel
  // Sent without a currency too: the goal's currency is assumed to apply (README, decisions).
  if (event.value !== undefined) customData.value = event.value
  if (event.value !== undefined && event.currency) customData.currency = event.currency
  if (event.orderId) customData.transactionId = event.orderId
  const items = event.items.flatMap((item): UetItem[] => {
    const id = item.sku ?? item.product_id
    if (!id) return []
    return [{ id, ...(item.quantity === undefined ? {} : { quantity: item.quantity }), ...(item.price === undefined ? {} : { price: item.price }), ...(item.name ? { name: item.name } : {}) }]
  })
  if (items.length > 0) {
    customData.items = items
    customData.itemIds = items.map((item) => item.id)
  }
  // Retail purchase confirmation, as Microsoft's guide shows it (used by dynamic remarketing).
  if (event.standardEvent === 'Purchase') {
    customData.pageType = 'purchase'
    if (event.value !== undefined) customData.ecommTotalValue = event.value
  }
  return customData
}

/** Microsoft refuses the event (InvalidUrl) for a URL it cannot read, so only absolute http(s) URLs are sent. */
function toSourceUrl(pageUrl: string | undefined): string | undefined {
  if (!pageUrl || !URL.canParse(pageUrl)) return undefined
  return /^https?:$/.test(new URL(pageUrl).protocol) ? pageUrl : undefined
}

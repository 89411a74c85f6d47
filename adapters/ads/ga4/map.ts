/**
 * Pure mapping of conversions to one Measurement Protocol call: POST {base}/mp/collect?measurement_id=…&api_secret=…
 * (or /debug/mp/collect when `validate`) with `{ client_id, user_id?, consent?, user_data?, events: [...] }`. One
 * request speaks for one browser (client_id, user_id, consent and user_data are request-level), so conversions are
 * grouped by those (requestGroup) before batching. Decisions and sources: README.md.
 */
import { createHash } from 'node:crypto'
import type { AdjustmentEvent, ConsentState, ConversionEvent, PlatformRequest } from '../../../core/delivery/types.ts'
import { gaClientId, isSha256Hex } from '../../shared/helpers.ts'
import { ga4EventFor, type Ga4EventMapping } from './events.ts'

export const GA4_HOSTS = { global: 'https://www.google-analytics.com', eu: 'https://region1.google-analytics.com' } as const

/** One site's GA4 options, as the schema in index.ts resolves them. */
export interface Ga4Options {
  /** The web stream's measurement id, `G-XXXXXXXXXX` (Admin → Data streams → the stream). */
  measurementId: string
  /** A Measurement Protocol API secret of that stream; sent in the query string, as the protocol asks. */
  apiSecret: string
  /** `eu` collects through region1.google-analytics.com, which keeps the data in the EU before it is processed. */
  region?: 'global' | 'eu'
  /** Post to the validation server (/debug/mp/collect): nothing reaches reports, each problem becomes a refusal. */
  validate?: boolean
  /** Overrides of the standard-event → GA4-event mapping (events.ts DEFAULT_EVENTS). */
  events?: Ga4EventMapping
  /** Stands in for the region's host (a proxy, server-side GTM or a fake), without a trailing slash. */
  baseUrl?: string
}

/** What one request says about the browser and person, shared by every event in it. */
interface RequestUser {
  client_id: string
  user_id?: string
  consent?: { ad_user_data?: 'GRANTED' | 'DENIED', ad_personalization?: 'GRANTED' | 'DENIED' }
  user_data?: { sha256_email_address?: string[], sha256_phone_number?: string[] }
}

export function toGa4Request(events: readonly ConversionEvent[], options: Ga4Options): PlatformRequest {
  // requestGroup keeps one browser per request, so the first event speaks for all.
  const user = requestUserOf(events[0]!)
  return post(options, { ...user, events: events.map((event) => toGa4Event(event, options)) })
}

/**
 * Why GA4 cannot take the event: switched off, or nothing to tie it to a browser or person (no `_ga` client id, and
 * no external id or hashed email to derive a stable one from).
 */
export function skipReason(event: ConversionEvent, options: Ga4Options): string | undefined {
  if (!ga4EventFor(event.standardEvent, options.events)) return `the ga4 destination is configured not to send ${event.standardEvent} (events.${event.standardEvent}: false)`
  if (!clientIdOf(event)) return 'nothing to tie the conversion to a GA4 user: no _ga client id from the tracking script, and no external id or hashed email to derive one from'
  return undefined
}

/** Events of one browser and person share a request: the key of what is request-level in the protocol. */
export function requestGroupOf(event: ConversionEvent): string {
  return createHash('sha256').update(JSON.stringify(requestUserOf(event))).digest('hex').slice(0, 32)
}

/**
 * The client id: the GA tag's own (`_ga` cookie, kept by the tracking script as `ga`), else one derived from the
 * person's external id or hashed email in the tag's `<number>.<number>` form, so every conversion of that person
 * lands on one GA4 user. Undefined when there is neither.
 */
export function clientIdOf(event: ConversionEvent): string | undefined {
  // Given by a server conversion, it may still be in the cookie's form (GA1.1.<a>.<b>).
  const kept = gaClientId(event.clickIds.ga)
  if (kept) return kept
  const basis = event.identity.externalId ?? event.identity.email
  if (!isSha256Hex(basis)) return undefined
  const digest = createHash('sha256').update(`dcgate-ga4-client:${basis}`).digest()
  return `${digest.readUInt32BE(0)}.${digest.readUInt32BE(4)}`
}

/** `_ga_<container>` session id kept as `<container>.<session id>`, used only for this stream's container. */
export function sessionIdOf(event: ConversionEvent, measurementId: string): string | undefined {
  const [container, session] = (event.clickIds.ga_session ?? '').split('.')
  return container && session && `G-${container}`.toUpperCase() === measurementId.toUpperCase() ? session : undefined
}

/** A refund as GA4's `refund` event for the conversion's transaction_id, for the conversion's browser. */
export function toGa4RefundRequest(items: readonly AdjustmentEvent[], options: Ga4Options): PlatformRequest {
  const user = requestUserOf(items[0]!.conversion)
  return post(options, { ...user, events: items.map(({ conversion, adjustment }) => ({
    name: 'refund',
    timestamp_micros: adjustment.at.getTime() * 1000,
    params: {
      transaction_id: conversion.messageId,
      ...(conversion.value !== undefined && conversion.currency ? { value: conversion.value, currency: conversion.currency } : {}),
    },
  })) })
}

/**
 * GA4 takes a refunded amount, not the value left: a whole refund is the conversion's value; a partial one
 * (restatement) carries only what remains after every refund so far, so its amount cannot be told.
 */
export function refundSkipReason({ conversion, adjustment }: AdjustmentEvent): string | undefined {
  if (adjustment.type === 'restatement') return 'GA4 takes refunds as the amount refunded; a partial refund is told as the value that remains, which GA4 cannot take'
  if (!clientIdOf(conversion)) return 'the refunded conversion has no GA4 client id'
  return undefined
}

// --- internal ---

function post(options: Ga4Options, body: RequestUser & { events: unknown[] }): PlatformRequest {
  const base = (options.baseUrl ?? GA4_HOSTS[options.region ?? 'global']).replace(/\/+$/, '')
  const path = options.validate ? '/debug/mp/collect' : '/mp/collect'
  const query = new URLSearchParams({ measurement_id: options.measurementId, api_secret: options.apiSecret })
  return { url: `${base}${path}?${query}`, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }
}

function toGa4Event(event: ConversionEvent, options: Ga4Options): Record<string, unknown> {
  // skipReason refuses a switched-off standard event, so it has a GA4 name.
  const name = ga4EventFor(event.standardEvent, options.events)!
  const session = sessionIdOf(event, options.measurementId)
  const params: Record<string, unknown> = { transaction_id: event.messageId }
  // GA4 needs the currency with a value, or it drops the revenue.
  if (event.value !== undefined && event.currency) Object.assign(params, { value: event.value, currency: event.currency })
  const items = event.items.flatMap((item) => {
    const id = item.sku ?? item.product_id
    if (!id && !item.name) return []
    return [{
      ...(id ? { item_id: id } : {}),
      ...(item.name ? { item_name: item.name } : {}),
      ...(item.brand ? { item_brand: item.brand } : {}),
      ...(item.category ? { item_category: item.category } : {}),
      ...(item.price === undefined ? {} : { price: item.price }),
      quantity: item.quantity ?? 1,
    }]
  })
  if (items.length > 0) params.items = items
  if (session) params.session_id = session
  return { name, timestamp_micros: event.occurredAt.getTime() * 1000, params }
}

function requestUserOf(event: ConversionEvent): RequestUser {
  const user: RequestUser = { client_id: clientIdOf(event) ?? '' }
  if (isSha256Hex(event.identity.externalId)) user.user_id = event.identity.externalId
  const consent = { ...toConsent('ad_user_data', event.consent.adUserData), ...toConsent('ad_personalization', event.consent.adPersonalization) }
  if (Object.keys(consent).length > 0) user.consent = consent
  // User-provided data only where the person did not refuse its use for ads.
  if (event.consent.adUserData !== 'denied') {
    const data: NonNullable<RequestUser['user_data']> = {}
    if (isSha256Hex(event.identity.emailGoogle)) data.sha256_email_address = [event.identity.emailGoogle]
    if (isSha256Hex(event.identity.phoneE164)) data.sha256_phone_number = [event.identity.phoneE164]
    if (Object.keys(data).length > 0) user.user_data = data
  }
  return user
}

function toConsent<K extends string>(key: K, state: ConsentState): Partial<Record<K, 'GRANTED' | 'DENIED'>> {
  if (state === 'unknown') return {}
  return { [key]: state === 'granted' ? 'GRANTED' : 'DENIED' } as Partial<Record<K, 'GRANTED' | 'DENIED'>>
}

/**
 * One Segment `track` message in the automation route's terms (core/intake/conversion-request.ts): the same body
 * POST /api/v1/conversions/automation takes, so the same schema checks it and the same conversion comes out.
 * Pure: no I/O, the message is never changed.
 */
import { createHash } from 'node:crypto'
import { clickIdsFrom, clickIdsFromUrl } from '../../adapters/sources/click-ids.ts'
import { STANDARD_EVENTS, type SiteConfig } from '../../core/config/schema.ts'

type Json = Record<string, unknown>

const objectOr = (value: unknown): Json | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Json : undefined)
const first = (...values: unknown[]): unknown => values.find((value) => value !== undefined && value !== null && value !== '')

/**
 * The site event a Segment event name stands for: the name itself when it is a standard event or an active site
 * event key, else the key written from it ("Order Completed" → order_completed, compared without case), since
 * event keys hold no spaces. Undefined: the site does not know the event, and it is ignored.
 */
export function siteEventFor(site: SiteConfig, name: string): string | undefined {
  const active = site.events.filter((event) => event.active)
  if ((STANDARD_EVENTS as readonly string[]).includes(name) || active.some((event) => event.key === name)) return name
  const asKey = trimUnderscores(name.trim().replace(/[^A-Za-z0-9_.:-]+/g, '_')).toLowerCase()
  return active.find((event) => event.key.toLowerCase() === asKey)?.key
}

/** The text without leading and trailing `_`, in one pass (a `/_+$/` replace is quadratic on `x___…___x`). */
function trimUnderscores(text: string): string {
  let start = 0
  let end = text.length
  while (start < end && text[start] === '_') start++
  while (end > start && text[end - 1] === '_') end--
  return text.slice(start, end)
}

/**
 * When it happened: `timestamp` as given (server libraries set it); else the device's `originalTimestamp` moved by
 * the device clock's skew (the time received minus `sentAt`), as Segment's common fields describe; else now.
 */
export function occurredAt(message: Json, batchSentAt: unknown, receivedAt: Date): unknown {
  if (message.timestamp !== undefined && message.timestamp !== null) return message.timestamp
  const original = dateOf(message.originalTimestamp)
  const sentAt = dateOf(message.sentAt ?? batchSentAt)
  if (!original) return undefined
  if (!sentAt) return original.toISOString()
  const corrected = new Date(original.getTime() + receivedAt.getTime() - sentAt.getTime())
  return Number.isNaN(corrected.getTime()) ? undefined : corrected.toISOString()
}

function dateOf(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** A stable id for a message sent without one: a client resending the same message is skipped as a duplicate. */
export function derivedMessageId(message: Json): string {
  return `segment-${createHash('sha256').update(JSON.stringify(message)).digest('hex').slice(0, 32)}`
}

/** Segment's traits (camelCase, an address object) as the automation route's trait names. */
function toTraits(traits: Json | undefined): Json | undefined {
  if (!traits) return undefined
  const address = objectOr(traits.address) ?? {}
  const mapped: Json = {
    email: traits.email, phone: traits.phone,
    first_name: first(traits.firstName, traits.first_name), last_name: first(traits.lastName, traits.last_name),
    street: first(address.street, traits.street), postal_code: first(address.postalCode, address.postal_code, traits.postal_code),
    city: first(address.city, traits.city), state: first(address.state, traits.state), country: first(address.country, traits.country),
  }
  return Object.fromEntries(Object.entries(mapped).filter(([, value]) => value !== undefined && value !== null))
}

/** Segment's e-commerce `products` as the automation route's `items`; a product that is no object is passed on to be refused. */
function toItems(products: unknown): unknown {
  if (!Array.isArray(products)) return products
  return products.map((product) => {
    const p = objectOr(product)
    if (!p) return product
    const item: Json = { product_id: p.product_id ?? p.productId, sku: p.sku, name: p.name, category: p.category, brand: p.brand, quantity: p.quantity, price: p.price, currency: p.currency }
    return Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined && value !== null))
  })
}

/**
 * The automation request body for a `track` message. Click ids come from `context.campaign`, the page URL's query
 * (`context.page.url`, `context.page.search`) and `properties` (fbp, fbc… as a storefront sends them), in that order.
 */
export function toAutomationBody(message: Json, event: string, options: { batchSentAt?: unknown, receivedAt: Date }): Json {
  const properties = objectOr(message.properties) ?? {}
  const context = objectOr(message.context) ?? {}
  const page = objectOr(context.page) ?? {}
  const clickIds = {
    ...clickIdsFrom(Object.entries(properties)),
    ...clickIdsFromUrl(typeof page.search === 'string' && page.search.startsWith('?') ? page.search : undefined),
    ...clickIdsFromUrl(page.url),
    ...clickIdsFrom(Object.entries(objectOr(context.campaign) ?? {})),
  }
  const body: Json = {
    event,
    messageId: message.messageId,
    timestamp: occurredAt(message, options.batchSentAt, options.receivedAt),
    userId: message.userId === null ? undefined : typeof message.userId === 'number' ? String(message.userId) : message.userId,
    anonymousId: message.anonymousId === null ? undefined : typeof message.anonymousId === 'number' ? String(message.anonymousId) : message.anonymousId,
    properties: {
      value: first(properties.revenue, properties.total, properties.value),
      currency: properties.currency ?? undefined,
      order_id: first(properties.order_id, properties.orderId),
      items: properties.products === undefined ? undefined : toItems(properties.products),
    },
    context: {
      traits: toTraits(objectOr(context.traits)),
      ip: context.ip ?? undefined,
      userAgent: context.userAgent ?? undefined,
      page: page.url === undefined ? undefined : { url: page.url },
      consent: context.consent ?? undefined,
      identifiers: Object.keys(clickIds).length ? clickIds : undefined,
    },
  }
  return body
}

/**
 * An error line about the automation body, naming the Segment field it was read from instead (`properties.revenue`
 * for `properties.value`), so the client is told about what it sent.
 */
export function inSegmentTerms(line: string, message: Json): string {
  const colon = line.indexOf(':')
  if (colon < 0) return line
  const path = line.slice(0, colon)
  const properties = objectOr(message.properties) ?? {}
  const sentAs = (names: string[]) => names.find((name) => first(properties[name]) !== undefined)
  let renamed = path
  if (path === 'properties.value') renamed = `properties.${sentAs(['revenue', 'total', 'value']) ?? 'revenue'}`
  else if (path === 'properties.order_id') renamed = `properties.${sentAs(['order_id', 'orderId']) ?? 'order_id'}`
  else if (path.startsWith('properties.items')) renamed = `properties.products${path.slice('properties.items'.length)}`
  return renamed + line.slice(colon)
}

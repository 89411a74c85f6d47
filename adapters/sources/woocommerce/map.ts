/** A WooCommerce REST order (the order.created / order.updated payload) as one conversion. Decisions: README.md. */
import type { SourceConversion } from '../../../core/registry.ts'
import type { ConversionItem } from '../../../core/delivery/types.ts'
import { clickIdsFrom, clickIdsFromUrl } from '../click-ids.ts'
import {
  compact, countAt, currencyAt, idAt, instantAt, ipAt, listAt, moneyAt, objectAt, requiredIdAt, textAt, type JsonObject,
} from '../fields.ts'

/** Statuses WooCommerce gives an order once its payment is complete (WC_Order::payment_complete). */
const PAID_STATUSES = new Set(['processing', 'completed'])

/** Order attribution's landing page URL, query string included. */
const SESSION_ENTRY = '_wc_order_attribution_session_entry'

/** Keyed by the order id, so the order.updated that follows an order.created (or a second update) dedupes. */
export function wooMessageId(orderId: string): string {
  return `woocommerce-order-${orderId}`
}

/**
 * The subscription a WooCommerce Subscriptions renewal order renews, else undefined. Renewal orders carry the meta
 * `_subscription_renewal` (the subscription's id; WCS_Related_Order_Store) and are created with `created_via`
 * `subscription` (wcs_create_order_from_subscription); a parent (first), switch or resubscribe order has neither.
 */
export function renewalOf(order: JsonObject): string | undefined {
  const meta = metaData(order.meta_data).find(([key]) => key === '_subscription_renewal')
  if (meta) return String(meta[1] ?? '?')
  return textAt(order.created_via, 'created_via', 255) === 'subscription' ? '?' : undefined
}

/** Why the order is not (yet) a sale, or undefined when it is paid. */
export function unpaidReason(order: JsonObject, id: string): string | undefined {
  const status = textAt(order.status, 'status') ?? '(no status)'
  const paidAt = order.date_paid_gmt ?? order.date_paid
  if (PAID_STATUSES.has(status) && paidAt) return undefined
  return PAID_STATUSES.has(status)
    ? `order ${id} is ${status} but has no date_paid yet`
    : `order ${id} is ${status}, not paid (waiting for processing or completed)`
}

export function toWooConversion(order: JsonObject, event: string): SourceConversion {
  const id = requiredIdAt(order.id, 'id')
  const billing = objectAt(order.billing, 'billing') ?? {}
  const customerId = idAt(order.customer_id, 'customer_id')
  const meta = metaData(order.meta_data)
  return compact({
    messageId: wooMessageId(id),
    event,
    // *_gmt fields carry UTC without a zone; the others are the shop's local time.
    occurredAt: instantAt(order.date_paid_gmt, 'date_paid_gmt', true) ?? instantAt(order.date_created_gmt, 'date_created_gmt', true),
    value: moneyAt(order.total, 'total'),
    currency: currencyAt(order.currency, 'currency'),
    orderId: id,
    items: listAt(order.line_items, 'line_items').map((item, index) => toItem(item, `line_items[${index}]`)),
    channel: 'online' as const,
    traits: compact({
      email: textAt(billing.email, 'billing.email', 254),
      phone: textAt(billing.phone, 'billing.phone', 64),
      first_name: textAt(billing.first_name, 'billing.first_name', 255),
      last_name: textAt(billing.last_name, 'billing.last_name', 255),
      street: textAt(billing.address_1, 'billing.address_1', 500),
      city: textAt(billing.city, 'billing.city', 255),
      state: textAt(billing.state, 'billing.state', 255),
      postal_code: textAt(billing.postcode, 'billing.postcode', 32),
      country: textAt(billing.country, 'billing.country', 64),
    }),
    identifiers: compact({
      // WooCommerce's order attribution (8.5+) keeps the landing page; explicit meta keys win over its query string.
      ...clickIdsFromUrl(meta.find(([key]) => key === SESSION_ENTRY)?.[1]),
      ...clickIdsFrom(meta),
      // 0 is WooCommerce's "guest".
      customer_id: customerId === '0' ? undefined : customerId,
    }),
    ip: ipAt(order.customer_ip_address),
    userAgent: textAt(order.customer_user_agent, 'customer_user_agent'),
  } satisfies SourceConversion)
}

function toItem(value: unknown, path: string): ConversionItem {
  const item = objectAt(value, path) ?? {}
  return compact({
    sku: textAt(item.sku, `${path}.sku`, 255),
    product_id: idAt(item.product_id, `${path}.product_id`),
    name: decodeEntities(textAt(item.name, `${path}.name`, 500)),
    quantity: countAt(item.quantity, `${path}.quantity`),
    price: moneyAt(item.price, `${path}.price`),
  })
}

/** meta_data: [{ id, key, value }]; a checkout plugin may store click ids here. Values that are not text are skipped. */
function metaData(value: unknown): [string, unknown][] {
  return listAt(value, 'meta_data').map((entry, index) => {
    const meta = objectAt(entry, `meta_data[${index}]`) ?? {}
    return [typeof meta.key === 'string' ? meta.key : '', meta.value]
  })
}

const ENTITIES = new Map(Object.entries({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ndash: '–', mdash: '—', hellip: '…' }))

/** WooCommerce stores product names HTML-escaped ("Ship Your Idea &ndash; Black"); platforms want the text. */
function decodeEntities(text: string | undefined): string | undefined {
  return text?.replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]{2,8}));/gi, (entity, decimal?: string, hex?: string, name?: string) => {
    if (name) return ENTITIES.get(name.toLowerCase()) ?? entity
    const point = decimal ? Number(decimal) : Number.parseInt(hex ?? '', 16)
    return point > 0 && point <= 0x10FFFF ? String.fromCodePoint(point) : entity
  })
}

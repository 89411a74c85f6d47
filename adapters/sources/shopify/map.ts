/** A Shopify REST Order (the orders/paid payload) as one conversion. Field choices and sources: README.md. */
import type { SourceConversion } from '../../../core/registry.ts'
import type { ConversionItem } from '../../../core/delivery/types.ts'
import { clickIdsFrom, clickIdsFromUrl } from '../click-ids.ts'
import {
  compact, countAt, currencyAt, idAt, instantAt, ipAt, listAt, moneyAt, objectAt, requiredIdAt, textAt, type JsonObject,
} from '../fields.ts'

/** One paid order is one conversion, keyed by the order id: every webhook about it (retries included) dedupes. */
export function shopifyMessageId(orderId: string): string {
  return `shopify-order-${orderId}`
}

export function toShopifyConversion(order: JsonObject, event: string): SourceConversion {
  const id = requiredIdAt(order.id, 'id')
  const customer = objectAt(order.customer, 'customer')
  const client = objectAt(order.client_details, 'client_details')
  return compact({
    messageId: shopifyMessageId(id),
    event,
    occurredAt: instantAt(order.processed_at, 'processed_at') ?? instantAt(order.created_at, 'created_at'),
    // Shop currency throughout (total_price, line item prices), so one store's values always compare.
    value: moneyAt(order.total_price, 'total_price'),
    currency: currencyAt(order.currency, 'currency'),
    orderId: id,
    items: listAt(order.line_items, 'line_items').map((item, index) => toItem(item, `line_items[${index}]`)),
    channel: textAt(order.source_name, 'source_name') === 'pos' ? 'in_store' : 'online',
    traits: toTraits(order, customer),
    identifiers: compact({
      // A storefront script's note attribute is deliberate; the landing page query is the fallback.
      ...clickIdsFromUrl(order.landing_site),
      ...clickIdsFrom(noteAttributes(order.note_attributes)),
      customer_id: idAt(customer?.id, 'customer.id'),
    }),
    ip: ipAt(order.browser_ip) ?? ipAt(client?.browser_ip),
    userAgent: textAt(client?.user_agent, 'client_details.user_agent'),
    pageUrl: shopOrigin(order.order_status_url),
  } satisfies SourceConversion)
}

/**
 * The page a web sale happened on, as far as the order tells: the host of its order status page (the shop's
 * checkout). Only the origin: the path and query open that order's status page for anyone holding them.
 */
function shopOrigin(statusUrl: unknown): string | undefined {
  if (typeof statusUrl !== 'string') return undefined
  try {
    const url = new URL(statusUrl)
    return url.protocol === 'https:' ? `${url.origin}/` : undefined
  }
  catch {
    return undefined
  }
}

function toItem(value: unknown, path: string): ConversionItem {
  const item = objectAt(value, path) ?? {}
  return compact({
    sku: textAt(item.sku, `${path}.sku`, 255),
    product_id: idAt(item.product_id, `${path}.product_id`),
    name: textAt(item.title, `${path}.title`, 500) ?? textAt(item.name, `${path}.name`, 500),
    quantity: countAt(item.quantity, `${path}.quantity`),
    price: moneyAt(item.price, `${path}.price`),
  })
}

function toTraits(order: JsonObject, customer: JsonObject | undefined): SourceConversion['traits'] {
  const address = objectAt(order.billing_address, 'billing_address') ?? objectAt(order.shipping_address, 'shipping_address') ?? {}
  const at = order.billing_address ? 'billing_address' : 'shipping_address'
  return compact({
    email: textAt(order.email, 'email', 254) ?? textAt(order.contact_email, 'contact_email', 254) ?? textAt(customer?.email, 'customer.email', 254),
    phone: textAt(order.phone, 'phone', 64) ?? textAt(address.phone, `${at}.phone`, 64) ?? textAt(customer?.phone, 'customer.phone', 64),
    first_name: textAt(address.first_name, `${at}.first_name`, 255) ?? textAt(customer?.first_name, 'customer.first_name', 255),
    last_name: textAt(address.last_name, `${at}.last_name`, 255) ?? textAt(customer?.last_name, 'customer.last_name', 255),
    street: textAt(address.address1, `${at}.address1`, 500),
    city: textAt(address.city, `${at}.city`, 255),
    state: textAt(address.province_code, `${at}.province_code`, 255) ?? textAt(address.province, `${at}.province`, 255),
    postal_code: textAt(address.zip, `${at}.zip`, 32),
    country: textAt(address.country_code, `${at}.country_code`, 64) ?? textAt(address.country, `${at}.country`, 64),
  })
}

/** note_attributes: [{ name, value }], cart attributes a storefront script saved with the order. */
function noteAttributes(value: unknown): [string, unknown][] {
  return listAt(value, 'note_attributes').map((entry, index) => {
    const attribute = objectAt(entry, `note_attributes[${index}]`) ?? {}
    return [textAt(attribute.name, `note_attributes[${index}].name`, 255) ?? '', attribute.value]
  })
}

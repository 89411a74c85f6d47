import * as v from 'valibot'
import { SourceInputError, defineIntakeSource, type SourceParseResult } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { readJsonObject } from '../json-body.ts'
import { eventSchema, secretSchema } from '../options.ts'
import { headerValue, hmacSha256, signaturesEqual } from '../signature.ts'
import { idAt } from '../fields.ts'
import { toShopifyConversion } from './map.ts'
import { CANCELLED_TOPIC, REFUND_TOPIC, UPDATED_TOPIC, toShopifyCancellation, toShopifyRefund, toShopifyRefundedOrder } from './refund.ts'

// Shopify's newer event deliveries send the same headers without the X- prefix.
const HMAC_HEADERS = ['X-Shopify-Hmac-Sha256', 'Shopify-Hmac-Sha256'] as const
const TOPIC_HEADERS = ['X-Shopify-Topic', 'Shopify-Topic'] as const
export const PAID_TOPIC = 'orders/paid'

/** `sites[].sources.shopify`. */
const options = strictOptions({
  secret: secretSchema('app client secret (or the signing key shown under Settings → Notifications → Webhooks)'),
  event: eventSchema,
}, 'secret')
export type ShopifyOptions = v.InferOutput<typeof options>

/**
 * Shopify orders/paid webhooks: one payment-confirmed conversion per paid order; refunds/create, orders/cancelled and
 * orders/updated (financial_status refunded) mark it refunded. Setup and decisions: README.md.
 */
export default defineIntakeSource<ShopifyOptions>({
  name: 'shopify',
  options,
  signature: 'required',
  confirmation: 'payment_confirmed',
  isSigned: (headers) => headerValue(headers, HMAC_HEADERS) !== undefined,
  // base64(HMAC-SHA256(secret, raw body)), compared as text so a header with stray characters cannot match.
  verify: (raw, headers, { secret }) => {
    const received = headerValue(headers, HMAC_HEADERS)
    return received !== undefined && signaturesEqual(hmacSha256(secret, raw).toString('base64'), received)
  },
  parse: (raw, headers, { event }) => {
    const topic = headerValue(headers, TOPIC_HEADERS)
    if (!topic) throw new SourceInputError('X-Shopify-Topic header: is missing; Shopify sends it with every webhook')
    if (topic === REFUND_TOPIC || topic === CANCELLED_TOPIC || topic === UPDATED_TOPIC) return parseRefund(topic, readJsonObject(raw, { bigIntegersAsText: true }))
    if (topic !== PAID_TOPIC) return { kind: 'ignored', reason: `topic ${topic} carries no payment or refund; subscribe this URL to ${PAID_TOPIC}, ${REFUND_TOPIC} and ${CANCELLED_TOPIC}` }
    const order = readJsonObject(raw, { bigIntegersAsText: true })
    // Orders paid with the Bogus Gateway or in a test store are not sales; they never reach an ad platform.
    if (order.test === true) return { kind: 'ignored', reason: `order ${idAt(order.id, 'id') ?? '(no id)'} is a test order` }
    return { kind: 'conversions', conversions: [toShopifyConversion(order, event)], sourceEventType: PAID_TOPIC }
  },
})

function parseRefund(topic: string, body: Record<string, unknown>): SourceParseResult {
  if (topic === CANCELLED_TOPIC) return { kind: 'refund', refund: toShopifyCancellation(body), sourceEventType: topic }
  const refund = topic === REFUND_TOPIC ? toShopifyRefund(body) : toShopifyRefundedOrder(body)
  if (refund) return { kind: 'refund', refund, sourceEventType: topic }
  return { kind: 'ignored', reason: topic === REFUND_TOPIC ? 'the refund returned no money (no successful refund transaction)' : 'the order update is not a full refund' }
}

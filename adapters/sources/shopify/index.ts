import * as v from 'valibot'
import { SourceInputError, defineIntakeSource } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { readJsonObject } from '../json-body.ts'
import { eventSchema, secretSchema } from '../options.ts'
import { headerValue, hmacSha256, signaturesEqual } from '../signature.ts'
import { idAt } from '../fields.ts'
import { toShopifyConversion } from './map.ts'

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

/** Shopify orders/paid webhooks: one payment-confirmed conversion per paid order. Setup and decisions: README.md. */
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
    if (topic !== PAID_TOPIC) return { kind: 'ignored', reason: `topic ${topic} carries no payment; subscribe this URL to ${PAID_TOPIC} only` }
    const order = readJsonObject(raw, { bigIntegersAsText: true })
    // Orders paid with the Bogus Gateway or in a test store are not sales; they never reach an ad platform.
    if (order.test === true) return { kind: 'ignored', reason: `order ${idAt(order.id, 'id') ?? '(no id)'} is a test order` }
    return { kind: 'conversions', conversions: [toShopifyConversion(order, event)], sourceEventType: PAID_TOPIC }
  },
})

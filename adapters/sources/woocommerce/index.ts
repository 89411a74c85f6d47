import * as v from 'valibot'
import { SourceInputError, defineIntakeSource } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { readJsonObject } from '../json-body.ts'
import { eventSchema, secretSchema } from '../options.ts'
import { headerValue, hmacSha256, signaturesEqual } from '../signature.ts'
import { requiredIdAt } from '../fields.ts'
import { toWooConversion, unpaidReason } from './map.ts'

const SIGNATURE_HEADER = ['X-WC-Webhook-Signature'] as const
const TOPIC_HEADER = ['X-WC-Webhook-Topic'] as const
export const ORDER_TOPICS = ['order.created', 'order.updated'] as const

/** `sites[].sources.woocommerce`. */
const options = strictOptions({
  secret: secretSchema('webhook secret entered in WooCommerce → Settings → Advanced → Webhooks'),
  event: eventSchema,
}, 'secret')
export type WooCommerceOptions = v.InferOutput<typeof options>

/**
 * Saving a webhook makes WooCommerce POST `webhook_id=<n>` (form-encoded, unsigned) and keep the webhook
 * pending until it is answered 200 (WC_Webhook::deliver_ping). That body carries nothing to store, so verify
 * lets exactly that body through and parse answers it as ignored.
 */
export function isPing(raw: Uint8Array, headers: Headers): boolean {
  return headerValue(headers, SIGNATURE_HEADER) === undefined && raw.length <= 40 && /^webhook_id=\d+$/.test(Buffer.from(raw).toString('latin1'))
}

/** WooCommerce order webhooks: one payment-confirmed conversion per paid order. Setup and decisions: README.md. */
export default defineIntakeSource<WooCommerceOptions>({
  name: 'woocommerce',
  options,
  signature: 'required',
  confirmation: 'payment_confirmed',
  isSigned: (headers) => headerValue(headers, SIGNATURE_HEADER) !== undefined,
  // base64(HMAC-SHA256(webhook secret, raw body)), as WC_Webhook::generate_signature computes it.
  verify: (raw, headers, { secret }) => {
    if (isPing(raw, headers)) return true
    const received = headerValue(headers, SIGNATURE_HEADER)
    return received !== undefined && signaturesEqual(hmacSha256(secret, raw).toString('base64'), received)
  },
  parse: (raw, headers, { event }) => {
    if (isPing(raw, headers)) return { kind: 'ignored', reason: 'WooCommerce ping, sent when the webhook is saved' }
    const topic = headerValue(headers, TOPIC_HEADER)
    if (!topic) throw new SourceInputError('X-WC-Webhook-Topic header: is missing; WooCommerce sends it with every webhook')
    if (!(ORDER_TOPICS as readonly string[]).includes(topic)) {
      return { kind: 'ignored', reason: `topic ${topic} carries no payment; use ${ORDER_TOPICS.join(' or ')}` }
    }
    const order = readJsonObject(raw, { bigIntegersAsText: true })
    const unpaid = unpaidReason(order, requiredIdAt(order.id, 'id'))
    if (unpaid) return { kind: 'ignored', reason: unpaid }
    return { kind: 'conversions', conversions: [toWooConversion(order, event)], sourceEventType: topic }
  },
})

import * as v from 'valibot'
import { SourceInputError, defineIntakeSource } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { readJsonObject } from '../json-body.ts'
import { eventSchema, secretSchema } from '../options.ts'
import { headerValue, hmacSha256, signaturesEqual } from '../signature.ts'
import { requiredIdAt } from '../fields.ts'
import { renewalOf, toWooConversion, unpaidReason } from './map.ts'
import { ENDED_STATUSES, toWooRefunds } from './refund.ts'

const SIGNATURE_HEADER = ['X-WC-Webhook-Signature'] as const
const TOPIC_HEADER = ['X-WC-Webhook-Topic'] as const
export const ORDER_TOPICS = ['order.created', 'order.updated'] as const

/** `sites[].sources.woocommerce`. */
const options = strictOptions({
  secret: secretSchema('webhook secret entered in WooCommerce → Settings → Advanced → Webhooks'),
  event: eventSchema,
  /** WooCommerce Subscriptions renewal orders. Absent: answered 200 and stored nowhere. Set: recorded as `event`. */
  renewals: v.optional(strictOptions({
    event: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
  }, 'event, the site\'s event key or standard event renewals are recorded as')),
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

/**
 * WooCommerce order webhooks: one payment-confirmed conversion per paid order (renewals apart), and the refunds and
 * cancellations an order reports. Setup and decisions: README.md.
 */
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
  parse: (raw, headers, { event, renewals }) => {
    if (isPing(raw, headers)) return { kind: 'ignored', reason: 'WooCommerce ping, sent when the webhook is saved' }
    const topic = headerValue(headers, TOPIC_HEADER)
    if (!topic) throw new SourceInputError('X-WC-Webhook-Topic header: is missing; WooCommerce sends it with every webhook')
    if (!(ORDER_TOPICS as readonly string[]).includes(topic)) {
      return { kind: 'ignored', reason: `topic ${topic} carries no payment; use ${ORDER_TOPICS.join(' or ')}` }
    }
    const order = readJsonObject(raw, { bigIntegersAsText: true })
    const id = requiredIdAt(order.id, 'id')
    // A renewal is not a new customer: never the Purchase event; ignored unless the site records renewals.
    const renews = renewalOf(order)
    if (renews && !renewals) {
      return { kind: 'ignored', reason: `order ${id} renews subscription ${renews} (WooCommerce Subscriptions): renewals are not recorded (set sources.woocommerce.renewals.event to record them as their own event)` }
    }
    // Refunds (partial ones listed in `refunds`) and a refunded or cancelled status mark the stored order.
    const refunds = toWooRefunds(order, id)
    if (ENDED_STATUSES.has(String(order.status))) {
      return refunds.length > 0
        ? { kind: 'conversions', conversions: [], refunds, sourceEventType: topic }
        : { kind: 'ignored', reason: `order ${id} is cancelled and was never paid: nothing to take back` }
    }
    const unpaid = unpaidReason(order, id)
    if (unpaid) return { kind: 'ignored', reason: unpaid }
    const conversions = [toWooConversion(order, renews && renewals ? renewals.event : event)]
    return refunds.length > 0 ? { kind: 'conversions', conversions, refunds, sourceEventType: topic } : { kind: 'conversions', conversions, sourceEventType: topic }
  },
})

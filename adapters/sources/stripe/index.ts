import * as v from 'valibot'
import { defineIntakeSource } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { readJsonObject } from '../json-body.ts'
import { eventSchema } from '../options.ts'
import { headerValue } from '../signature.ts'
import { toStripeResult } from './map.ts'
import { verifyStripeSignature } from './signature.ts'

const SIGNATURE_HEADER = ['Stripe-Signature'] as const
/** Stripe sends a payment's events within seconds of each other; five minutes covers a slow or retried delivery. */
const DEFAULT_WAIT_SECONDS = 300

/** `sites[].sources.stripe`. */
const options = strictOptions({
  signingSecret: v.pipe(
    v.string('must be a string'),
    v.trim(),
    v.regex(/^whsec_\S{8,}$/, 'must be the endpoint\'s signing secret, whsec_… (Dashboard → Developers → Webhooks → your endpoint)'),
  ),
  toleranceSeconds: v.optional(v.pipe(v.number('must be a number of seconds'), v.integer('must be a whole number of seconds'), v.minValue(1, 'must be at least 1'), v.maxValue(86_400, 'must be at most 86400 (one day)')), 300),
  event: eventSchema,
  /**
   * Seconds a conversion that a later event may withdraw waits, stored, before it is sent: a PaymentIntent on API
   * versions since 2025-03-31.basil (invoice_payment.paid withdraws it when it paid an invoice), and a subscription's
   * first invoice (its Checkout Session replaces it). 0 sends them as soon as the worker runs. README.md.
   */
  waitSeconds: v.optional(v.pipe(v.number('must be a number of seconds'), v.integer('must be a whole number of seconds'), v.minValue(0, 'must be 0 or more'), v.maxValue(86_400, 'must be at most 86400 (one day)')), DEFAULT_WAIT_SECONDS),
  /** Absent: a subscription renewal is answered 200 and stored nowhere. Set: it is recorded as `event`. */
  renewals: v.optional(strictOptions({
    event: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
  }, 'event, the site\'s event key or standard event renewals are recorded as')),
}, 'signingSecret')
export type StripeOptions = v.InferOutput<typeof options>

/** Stripe payment webhooks (Checkout, PaymentIntents, invoices): one payment-confirmed conversion per payment, never per renewal. README.md. */
export default defineIntakeSource<StripeOptions>({
  name: 'stripe',
  options,
  signature: 'required',
  confirmation: 'payment_confirmed',
  isSigned: (headers) => headerValue(headers, SIGNATURE_HEADER) !== undefined,
  verify: (raw, headers, { signingSecret, toleranceSeconds }, now) => verifyStripeSignature(raw, headerValue(headers, SIGNATURE_HEADER), signingSecret, toleranceSeconds, now),
  // Stripe's ids and amounts fit in a double; plain JSON reading is enough.
  parse: (raw, _headers, { event, renewals, waitSeconds }) => toStripeResult(readJsonObject(raw), { eventName: event, renewalEvent: renewals?.event, waitSeconds }),
})

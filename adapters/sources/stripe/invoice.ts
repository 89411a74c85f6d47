/**
 * Stripe invoices: a subscription's first invoice is its Purchase (unless its Checkout Session, which carries more,
 * replaces it), a renewal is never one, and an InvoicePayment tells which PaymentIntent paid an invoice, so that
 * intent is not counted again. Decisions: README.md.
 */
import type { SourceConversion, SourceParseResult } from '../../../core/registry.ts'
import { currencyAt, objectAt, requiredIdAt, textAt, type JsonObject } from '../fields.ts'
import { INTENT_EVENT } from './events.ts'
import { expandableIdAt, intentMessageId, subscriptionMessageId, toConversion } from './payment.ts'


export interface InvoiceOptions {
  /** The event a subscription's first payment is recorded as. */
  eventName: string
  /** The event renewals are recorded as; undefined ignores them. */
  renewalEvent?: string
  /** How long the first invoice's conversion waits for its Checkout Session to replace it. */
  waitSeconds: number
}

/** A paid invoice: a subscription's first payment, a renewal, or a reason it is neither. */
export function fromInvoice(invoice: JsonObject, options: InvoiceOptions): SourceConversion | string {
  const id = requiredIdAt(invoice.id, 'data.object.id')
  const reason = textAt(invoice.billing_reason, 'data.object.billing_reason', 255)
  if (reason === 'subscription_create') return fromFirstInvoice(id, invoice, options)
  if (reason === 'subscription_cycle') return fromRenewal(id, invoice, options.renewalEvent)
  return `invoice ${id} has billing_reason ${reason ?? '(none)'}: only a subscription's first invoice (subscription_create) and renewals (subscription_cycle) are read from invoices`
}

/**
 * The first invoice of a subscription: the Purchase, keyed by the subscription as its Checkout Session is, so the
 * two are one conversion. It waits for the session, whose metadata and client_reference_id it lacks.
 */
function fromFirstInvoice(id: string, invoice: JsonObject, options: InvoiceOptions): SourceConversion | string {
  const { subscription, metadata } = subscriptionOf(invoice)
  if (!subscription) return `invoice ${id} has billing_reason subscription_create but names no subscription`
  if (invoice.amount_paid === 0) return `invoice ${id} starts subscription ${subscription} but nothing was paid (amount_paid 0, a trial)`
  const conversion = toInvoiceConversion(id, invoice, { ...metadata, ...objectAt(invoice.metadata, 'data.object.metadata') }, subscriptionMessageId(subscription), subscription, options.eventName)
  return { ...conversion, awaitsWithdrawalSeconds: options.waitSeconds }
}

/** A renewal, recorded only when the site asked for renewals, as their own event: never a Purchase. */
function fromRenewal(id: string, invoice: JsonObject, renewalEvent?: string): SourceConversion | string {
  const { subscription, metadata: subscriptionMetadata } = subscriptionOf(invoice)
  const renews = `invoice ${id} renews subscription ${subscription ?? '(unknown)'}`
  if (!renewalEvent) return `${renews}: renewals are not recorded (set sources.stripe.renewals.event to record them as their own event)`
  if (invoice.amount_paid === 0) return `${renews} but nothing was paid (amount_paid 0)`
  // The renewal's own order id: the subscription's order_id names the first purchase, and a platform that dedupes
  // by order id (Google Ads) would drop the renewal as its duplicate.
  const { order_id: _firstOrder, ...metadata } = { ...subscriptionMetadata, ...objectAt(invoice.metadata, 'data.object.metadata') }
  return toInvoiceConversion(id, invoice, metadata, `stripe-in-${id}`, id, renewalEvent)
}

function toInvoiceConversion(id: string, invoice: JsonObject, metadata: JsonObject, messageId: string, fallbackOrderId: string, eventName: string): SourceConversion {
  return toConversion({
    messageId,
    fallbackOrderId,
    amount: invoice.amount_paid,
    amountPath: 'data.object.amount_paid',
    currency: currencyAt(invoice.currency, 'data.object.currency'),
    metadata,
    customerId: undefined,
    person: { email: invoice.customer_email, phone: invoice.customer_phone, name: invoice.customer_name, address: invoice.customer_address },
    path: 'data.object.customer',
  }, eventName)
}

/**
 * invoice_payment.paid: the PaymentIntent paid an invoice, so it is no conversion of its own (the invoice, or its
 * Checkout Session, is). Its payment_intent.succeeded, waiting or yet to come, is withdrawn.
 */
export function fromInvoicePayment(payment: JsonObject, type: string): SourceParseResult {
  const id = requiredIdAt(payment.id, 'data.object.id')
  const invoice = expandableIdAt(payment.invoice, 'data.object.invoice') ?? '(unknown)'
  const paid = objectAt(payment.payment, 'data.object.payment') ?? {}
  const intent = expandableIdAt(paid.payment_intent, 'data.object.payment.payment_intent')
  if (!intent) return { kind: 'ignored', reason: `invoice payment ${id} of invoice ${invoice} was not made by a PaymentIntent (payment.type ${textAt(paid.type, 'data.object.payment.type', 64) ?? '(none)'}): nothing to withdraw` }
  const reason = `PaymentIntent ${intent} paid invoice ${invoice} (invoice payment ${id}); the invoice, or its Checkout Session, is the conversion`
  return { kind: 'conversions', conversions: [], withdrawals: [{ messageId: intentMessageId(intent), eventTypes: [INTENT_EVENT], reason }], sourceEventType: type }
}

/**
 * The invoice's subscription and its metadata snapshot: `parent.subscription_details` since API version
 * 2025-03-31.basil, `subscription` and `subscription_details` before. The subscription is an id, or an object when expanded.
 */
function subscriptionOf(invoice: JsonObject): { subscription: string | undefined, metadata: JsonObject } {
  const details = objectAt(objectAt(invoice.parent, 'data.object.parent')?.subscription_details, 'data.object.parent.subscription_details')
  const legacy = objectAt(invoice.subscription_details, 'data.object.subscription_details')
  const subscription = details
    ? expandableIdAt(details.subscription, 'data.object.parent.subscription_details.subscription')
    : expandableIdAt(invoice.subscription, 'data.object.subscription')
  return { subscription, metadata: objectAt((details ?? legacy)?.metadata, 'data.object.parent.subscription_details.metadata') ?? {} }
}

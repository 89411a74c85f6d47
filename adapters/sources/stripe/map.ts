/**
 * Stripe events as conversions: a paid Checkout Session, a succeeded PaymentIntent, a subscription's first invoice.
 * One payment is one conversion, whichever event carries it and in whatever order they come. Decisions: README.md.
 */
import type { SourceConversion, SourceParseResult, SourceWithdrawal } from '../../../core/registry.ts'
import { compact, currencyAt, fail, listAt, objectAt, requiredIdAt, textAt, unixSecondsAt, type JsonObject } from '../fields.ts'
import { INTENT_EVENT, INVOICE_EVENTS, INVOICE_PAYMENT_EVENT, SESSION_EVENTS } from './events.ts'
import { fromInvoice, fromInvoicePayment } from './invoice.ts'
import { expandableIdAt, intentMessageId, subscriptionMessageId, toConversion } from './payment.ts'
import { REFUND_EVENTS, fromRefundEvent } from './refund.ts'

/** The first API version whose PaymentIntent no longer names its invoice (2025-03-31.basil). */
const INVOICE_LEFT_INTENT = '2025-03-31'

export interface StripeMapOptions {
  /** The event payments are recorded as (`event`). */
  eventName: string
  /** The event renewals are recorded as (`renewals.event`); undefined ignores them. */
  renewalEvent?: string
  /** `waitSeconds`: how long a conversion that a later event may withdraw waits before it is sent. */
  waitSeconds: number
}

export function toStripeResult(event: JsonObject, options: StripeMapOptions): SourceParseResult {
  const type = textAt(event.type, 'type', 255) ?? fail('type', 'is required')
  const object = objectAt(objectAt(event.data, 'data')?.object, 'data.object') ?? fail('data.object', 'is required')
  const occurredAt = unixSecondsAt(event.created, 'created')
  let result: (SourceConversion & { withdrawals?: SourceWithdrawal[] }) | string
  if ((SESSION_EVENTS as readonly string[]).includes(type)) result = fromSession(object, options.eventName)
  else if (type === INTENT_EVENT) result = fromPaymentIntent(object, options, intentNamesInvoice(event))
  else if ((INVOICE_EVENTS as readonly string[]).includes(type)) result = fromInvoice(object, options)
  else if (type === INVOICE_PAYMENT_EVENT) return fromInvoicePayment(object, type)
  else if ((REFUND_EVENTS as readonly string[]).includes(type)) return fromRefundEvent(type, object, occurredAt)
  else return { kind: 'ignored', reason: `event type ${type} is not a payment; subscribe to ${[...SESSION_EVENTS, INTENT_EVENT, ...INVOICE_EVENTS, INVOICE_PAYMENT_EVENT, ...REFUND_EVENTS].join(', ')}` }
  if (typeof result === 'string') return { kind: 'ignored', reason: result }
  const { withdrawals, ...conversion } = result
  return compact({ kind: 'conversions' as const, conversions: [compact({ ...conversion, occurredAt })], withdrawals, sourceEventType: type })
}

/**
 * Whether the endpoint's API version still puts `invoice` on a PaymentIntent (before 2025-03-31.basil): then a
 * PaymentIntent without one pays no invoice. An event without `api_version` is taken as a current one.
 */
function intentNamesInvoice(event: JsonObject): boolean {
  const version = textAt(event.api_version, 'api_version', 64)
  return version !== undefined && version.slice(0, INVOICE_LEFT_INTENT.length) < INVOICE_LEFT_INTENT
}

/**
 * A Checkout Session; a reason instead when nothing was paid (yet). It replaces a waiting copy of its payment (its
 * PaymentIntent's, or its subscription's first invoice's), which lacks the session's metadata and client_reference_id.
 */
function fromSession(session: JsonObject, eventName: string): (SourceConversion & { withdrawals: SourceWithdrawal[] }) | string {
  const id = requiredIdAt(session.id, 'data.object.id')
  const status = textAt(session.payment_status, 'data.object.payment_status')
  if (status === 'unpaid') return `session ${id} is not paid yet; checkout.session.async_payment_succeeded follows when it is`
  if (status !== 'paid') return `session ${id} has payment_status ${status ?? '(none)'}: nothing was paid`
  // payment_intent is set in payment mode; a subscription session has none (its first invoice is paid by one).
  const intent = expandableIdAt(session.payment_intent, 'data.object.payment_intent')
  const subscription = intent ? undefined : expandableIdAt(session.subscription, 'data.object.subscription')
  const messageId = intent ? intentMessageId(intent) : subscription ? subscriptionMessageId(subscription) : `stripe-cs-${id}`
  const details = objectAt(session.customer_details, 'data.object.customer_details') ?? {}
  const conversion = toConversion({
    messageId,
    fallbackOrderId: intent ?? subscription ?? id,
    amount: session.amount_total,
    amountPath: 'data.object.amount_total',
    currency: currencyAt(session.currency, 'data.object.currency'),
    metadata: objectAt(session.metadata, 'data.object.metadata') ?? {},
    customerId: textAt(session.client_reference_id, 'data.object.client_reference_id', 255),
    person: { email: details.email, phone: details.phone, name: details.name, address: details.address },
    path: 'data.object.customer_details',
  }, eventName)
  // The copies that wait under this payment's id: its PaymentIntent's, or its subscription's first invoice's.
  const eventTypes = intent ? [INTENT_EVENT] : [...INVOICE_EVENTS]
  const withdrawals = intent || subscription ? [{ messageId, eventTypes, reason: `replaced by checkout session ${id}, the same payment` }] : []
  return { ...conversion, withdrawals }
}

/**
 * A PaymentIntent; a reason instead when it names the invoice it pays (API versions before basil). Since basil
 * nothing on it tells a one-off payment from an invoice's, so it waits for invoice_payment.paid to withdraw it.
 */
function fromPaymentIntent(intent: JsonObject, options: StripeMapOptions, namesInvoice: boolean): SourceConversion | string {
  const id = requiredIdAt(intent.id, 'data.object.id')
  const invoice = expandableIdAt(intent.invoice, 'data.object.invoice')
  if (invoice) return `PaymentIntent ${id} pays invoice ${invoice}; the invoice, or its Checkout Session, is the conversion`
  const shipping = objectAt(intent.shipping, 'data.object.shipping') ?? {}
  // Before API version 2022-11-15 the charges came embedded; latest_charge is an object only when expanded.
  const charge = objectAt(listAt(objectAt(intent.charges, 'data.object.charges')?.data, 'data.object.charges.data')[0], 'data.object.charges.data[0]')
    ?? (typeof intent.latest_charge === 'object' ? objectAt(intent.latest_charge, 'data.object.latest_charge') : undefined)
  const billing = objectAt(charge?.billing_details, 'data.object.charges.data[0].billing_details') ?? {}
  const conversion = toConversion({
    messageId: intentMessageId(id),
    fallbackOrderId: id,
    amount: intent.amount_received ?? intent.amount,
    amountPath: intent.amount_received == null ? 'data.object.amount' : 'data.object.amount_received',
    currency: currencyAt(intent.currency, 'data.object.currency'),
    metadata: objectAt(intent.metadata, 'data.object.metadata') ?? {},
    customerId: undefined,
    person: {
      email: intent.receipt_email ?? billing.email,
      phone: billing.phone ?? shipping.phone,
      name: billing.name ?? shipping.name,
      address: billing.address ?? shipping.address,
    },
    path: 'data.object',
  }, options.eventName)
  return namesInvoice ? conversion : { ...conversion, awaitsWithdrawalSeconds: options.waitSeconds }
}

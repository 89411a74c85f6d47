/**
 * Stripe events as conversions: a paid Checkout Session or a succeeded PaymentIntent. One payment is one
 * conversion keyed by its PaymentIntent id, whichever of the two events carries it. Decisions: README.md.
 */
import type { SourceConversion, SourceParseResult } from '../../../core/registry.ts'
import { clickIdsFrom } from '../click-ids.ts'
import { compact, currencyAt, fail, idAt, listAt, objectAt, requiredIdAt, textAt, unixSecondsAt, type JsonObject } from '../fields.ts'
import { fromMinorUnits } from './currency.ts'
import { REFUND_EVENTS, fromRefundEvent } from './refund.ts'

export const SESSION_EVENTS = ['checkout.session.completed', 'checkout.session.async_payment_succeeded'] as const
export const INTENT_EVENT = 'payment_intent.succeeded'
/** Read for subscription renewals only (billing_reason subscription_cycle); both name the same paid invoice. */
export const INVOICE_EVENTS = ['invoice.paid', 'invoice.payment_succeeded'] as const

/** `renewalEvent`: the event renewals are recorded as (`renewals.event`); undefined ignores them. */
export function toStripeResult(event: JsonObject, eventName: string, renewalEvent?: string): SourceParseResult {
  const type = textAt(event.type, 'type', 255) ?? fail('type', 'is required')
  const object = objectAt(objectAt(event.data, 'data')?.object, 'data.object') ?? fail('data.object', 'is required')
  const occurredAt = unixSecondsAt(event.created, 'created')
  let result: SourceConversion | string
  if ((SESSION_EVENTS as readonly string[]).includes(type)) result = fromSession(object, eventName)
  else if (type === INTENT_EVENT) result = fromPaymentIntent(object, eventName)
  else if ((INVOICE_EVENTS as readonly string[]).includes(type)) result = fromRenewalInvoice(object, renewalEvent)
  else if ((REFUND_EVENTS as readonly string[]).includes(type)) return fromRefundEvent(type, object, occurredAt)
  else return { kind: 'ignored', reason: `event type ${type} is not a payment; subscribe to ${[...SESSION_EVENTS, INTENT_EVENT, ...INVOICE_EVENTS, ...REFUND_EVENTS].join(', ')}` }
  if (typeof result === 'string') return { kind: 'ignored', reason: result }
  return { kind: 'conversions', conversions: [compact({ ...result, occurredAt })], sourceEventType: type }
}

/** A Checkout Session; a reason instead when nothing was paid (yet). */
function fromSession(session: JsonObject, eventName: string): SourceConversion | string {
  const id = requiredIdAt(session.id, 'data.object.id')
  const status = textAt(session.payment_status, 'data.object.payment_status')
  if (status === 'unpaid') return `session ${id} is not paid yet; checkout.session.async_payment_succeeded follows when it is`
  if (status !== 'paid') return `session ${id} has payment_status ${status ?? '(none)'}: nothing was paid`
  // payment_intent is an id, or the object when expanded; null for subscription sessions, keyed by the session then.
  const intent = session.payment_intent
  const intentId = typeof intent === 'object' && intent !== null ? idAt((intent as JsonObject).id, 'data.object.payment_intent.id') : idAt(intent, 'data.object.payment_intent')
  const details = objectAt(session.customer_details, 'data.object.customer_details') ?? {}
  const metadata = objectAt(session.metadata, 'data.object.metadata') ?? {}
  return toConversion({
    messageId: intentId ? `stripe-pi-${intentId}` : `stripe-cs-${id}`,
    fallbackOrderId: intentId ?? id,
    amount: session.amount_total,
    amountPath: 'data.object.amount_total',
    currency: currencyAt(session.currency, 'data.object.currency'),
    metadata,
    customerId: textAt(session.client_reference_id, 'data.object.client_reference_id', 255),
    person: { email: details.email, phone: details.phone, name: details.name, address: details.address },
    path: 'data.object.customer_details',
  }, eventName)
}

/** A PaymentIntent; a reason instead when it pays a subscription invoice (its Checkout Session is the conversion). */
function fromPaymentIntent(intent: JsonObject, eventName: string): SourceConversion | string {
  const id = requiredIdAt(intent.id, 'data.object.id')
  const invoice = idAt(intent.invoice, 'data.object.invoice')
  if (invoice) return `PaymentIntent ${id} pays invoice ${invoice} (a subscription); the checkout.session event is the conversion`
  const shipping = objectAt(intent.shipping, 'data.object.shipping') ?? {}
  // Before API version 2022-11-15 the charges came embedded; latest_charge is an object only when expanded.
  const charge = objectAt(listAt(objectAt(intent.charges, 'data.object.charges')?.data, 'data.object.charges.data')[0], 'data.object.charges.data[0]')
    ?? (typeof intent.latest_charge === 'object' ? objectAt(intent.latest_charge, 'data.object.latest_charge') : undefined)
  const billing = objectAt(charge?.billing_details, 'data.object.charges.data[0].billing_details') ?? {}
  return toConversion({
    messageId: `stripe-pi-${id}`,
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
  }, eventName)
}

/**
 * A paid invoice, recorded only when it renews a subscription and the site asked for renewals. A first invoice
 * (subscription_create) and every other kind are ignored here: the first payment is the Checkout Session's (or its
 * PaymentIntent's) conversion, so reading it from the invoice too would count it twice.
 */
function fromRenewalInvoice(invoice: JsonObject, renewalEvent: string | undefined): SourceConversion | string {
  const id = requiredIdAt(invoice.id, 'data.object.id')
  const reason = textAt(invoice.billing_reason, 'data.object.billing_reason', 255)
  if (reason !== 'subscription_cycle') {
    return `invoice ${id} has billing_reason ${reason ?? '(none)'}: only renewals (subscription_cycle) are read from invoices; a first payment is recorded from its checkout.session or payment_intent event`
  }
  const { subscription, metadata: subscriptionMetadata } = subscriptionOf(invoice)
  const renews = `invoice ${id} renews subscription ${subscription ?? '(unknown)'}`
  if (!renewalEvent) return `${renews}: renewals are not recorded (set sources.stripe.renewals.event to record them as their own event)`
  if (invoice.amount_paid === 0) return `${renews} but nothing was paid (amount_paid 0)`
  // The renewal's own order id: the subscription's order_id names the first purchase, and a platform that dedupes
  // by order id (Google Ads) would drop the renewal as its duplicate.
  const { order_id: _firstOrder, ...metadata } = { ...subscriptionMetadata, ...objectAt(invoice.metadata, 'data.object.metadata') }
  return toConversion({
    messageId: `stripe-in-${id}`,
    fallbackOrderId: id,
    amount: invoice.amount_paid,
    amountPath: 'data.object.amount_paid',
    currency: currencyAt(invoice.currency, 'data.object.currency'),
    metadata,
    customerId: undefined,
    person: { email: invoice.customer_email, phone: invoice.customer_phone, name: invoice.customer_name, address: invoice.customer_address },
    path: 'data.object.customer',
  }, renewalEvent)
}

/**
 * The invoice's subscription and its metadata snapshot: `parent.subscription_details` since API version
 * 2025-03-31.basil, `subscription` and `subscription_details` before. The subscription is an id, or an object when expanded.
 */
function subscriptionOf(invoice: JsonObject): { subscription: string | undefined, metadata: JsonObject } {
  const details = objectAt(objectAt(invoice.parent, 'data.object.parent')?.subscription_details, 'data.object.parent.subscription_details')
  const legacy = objectAt(invoice.subscription_details, 'data.object.subscription_details')
  const value = details ? details.subscription : invoice.subscription
  const path = details ? 'data.object.parent.subscription_details.subscription' : 'data.object.subscription'
  const subscription = typeof value === 'object' && value !== null ? idAt((value as JsonObject).id, `${path}.id`) : idAt(value, path)
  return { subscription, metadata: objectAt((details ?? legacy)?.metadata, 'data.object.parent.subscription_details.metadata') ?? {} }
}

interface Payment {
  messageId: string
  fallbackOrderId: string
  amount: unknown
  amountPath: string
  currency: string | undefined
  metadata: JsonObject
  customerId: string | undefined
  person: { email: unknown, phone: unknown, name: unknown, address: unknown }
  path: string
}

function toConversion(payment: Payment, eventName: string): SourceConversion {
  const { metadata, person, path } = payment
  const address = objectAt(person.address, `${path}.address`) ?? {}
  const [firstName, ...rest] = (textAt(person.name, `${path}.name`, 500) ?? '').split(/\s+/)
  return compact({
    messageId: payment.messageId,
    event: eventName,
    value: toValue(payment.amount, payment.amountPath, payment.currency),
    currency: payment.currency,
    orderId: textAt(metadata.order_id, 'data.object.metadata.order_id', 255) ?? payment.fallbackOrderId,
    channel: 'online' as const,
    traits: compact({
      email: textAt(person.email, `${path}.email`, 254),
      phone: textAt(person.phone, `${path}.phone`, 64),
      // Stripe collects one name; its first word is taken as the first name, the rest as the last name.
      first_name: firstName || undefined,
      last_name: rest.join(' ') || undefined,
      street: textAt(address.line1, `${path}.address.line1`, 500),
      city: textAt(address.city, `${path}.address.city`, 255),
      state: textAt(address.state, `${path}.address.state`, 255),
      postal_code: textAt(address.postal_code, `${path}.address.postal_code`, 32),
      country: textAt(address.country, `${path}.address.country`, 64),
    }),
    identifiers: compact({
      ...clickIdsFrom(Object.entries(metadata)),
      customer_id: payment.customerId ?? textAt(metadata.customer_id, 'data.object.metadata.customer_id', 255),
    }),
  } satisfies SourceConversion)
}

export function toValue(amount: unknown, path: string, currency: string | undefined): number | undefined {
  if (amount === undefined || amount === null) return undefined
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) fail(path, 'must be a whole number of minor units (cents), 0 or more')
  if (!currency) fail('data.object.currency', 'is required with an amount')
  return fromMinorUnits(amount, currency)
}

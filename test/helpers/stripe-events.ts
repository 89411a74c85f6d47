/**
 * Stripe webhook bodies built from the official `stripe` package's types (its pinned API version, Stripe.API_VERSION),
 * so a field Stripe does not have, or one of the wrong type, fails typecheck. Every field dcgate reads is required as
 * Stripe types it; the others may be left out. Bodies of API versions before 2025-03-31.basil add, typed here, the
 * fields basil removed (docs.stripe.com/changelog/basil/2025-03-31/add-support-for-multiple-partial-payments-on-invoices).
 */
import Stripe from 'stripe'

/** An object as a webhook carries it: the fields `K` as Stripe types them, any other field optional. */
type Body<T, K extends keyof T> = Pick<T, K> & Partial<T>
/** An event of type `E` whose data.object is `O`. */
type EventBody<E extends Stripe.Event, O> = Omit<E, 'data'> & { data: { object: O } }

type SessionBody = Body<Stripe.Checkout.Session, 'id' | 'object' | 'mode' | 'payment_status' | 'amount_total' | 'currency' | 'customer_details' | 'client_reference_id' | 'metadata' | 'payment_intent' | 'subscription' | 'invoice'>
type IntentBody = Body<Stripe.PaymentIntent, 'id' | 'object' | 'amount' | 'amount_received' | 'currency' | 'status' | 'metadata' | 'receipt_email' | 'shipping' | 'latest_charge'>
type InvoiceBody = Body<Stripe.Invoice, 'id' | 'object' | 'billing_reason' | 'amount_paid' | 'currency' | 'customer_email' | 'customer_name' | 'customer_phone' | 'customer_address' | 'metadata' | 'parent' | 'status'>
type InvoicePaymentBody = Body<Stripe.InvoicePayment, 'id' | 'object' | 'invoice' | 'payment' | 'status' | 'amount_paid' | 'currency' | 'is_default'>
/** Before basil a PaymentIntent named the invoice it paid, and an invoice its subscription and PaymentIntent. */
type LegacyIntentBody = Omit<IntentBody, 'invoice'> & { invoice: string | null }
type LegacyInvoiceBody = Omit<InvoiceBody, 'parent'> & { subscription: string | null, payment_intent: string | null, paid: boolean, subscription_details: { metadata: Stripe.Metadata | null } | null }

export type StripeWebhookBody =
  | EventBody<Stripe.CheckoutSessionCompletedEvent, SessionBody>
  | EventBody<Stripe.PaymentIntentSucceededEvent, IntentBody | LegacyIntentBody>
  | EventBody<Stripe.InvoicePaidEvent, InvoiceBody | LegacyInvoiceBody>
  | EventBody<Stripe.InvoicePaymentPaidEvent, InvoicePaymentBody>

/** The ids one payment's events share. */
export interface PaymentIds { subscription: string, invoice: string, intent: string, session: string }

const CUSTOMER = { email: 'ines.moreau@example.com', name: 'Inès Moreau', phone: '+33612345678' }
const ADDRESS: Stripe.Address = { city: 'Lyon', country: 'FR', line1: '12 rue de la République', line2: null, postal_code: '69002', state: null }

/** The event envelope, created now: platforms take recent events only. */
function envelope<T extends StripeWebhookBody['type']>(type: T, apiVersion: string) {
  return {
    id: `evt_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
    object: 'event' as const,
    api_version: apiVersion,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  }
}

/** checkout.session.completed: a subscription's sign-up (mode subscription) or a one-time payment (mode payment). */
export function sessionCompleted(ids: PaymentIds, mode: 'subscription' | 'payment', apiVersion: string = Stripe.API_VERSION): StripeWebhookBody {
  const object: SessionBody = {
    id: ids.session, object: 'checkout.session', mode, payment_status: 'paid', status: 'complete', amount_total: 2900, currency: 'eur',
    customer_details: { ...CUSTOMER, address: ADDRESS, business_name: null, individual_name: null, tax_exempt: 'none', tax_ids: [] },
    client_reference_id: 'CRM-4410',
    metadata: { order_id: `order-${ids.session}`, gclid: 'Cj0KCQiA-session-gclid' },
    payment_intent: mode === 'payment' ? ids.intent : null,
    subscription: mode === 'subscription' ? ids.subscription : null,
    invoice: mode === 'subscription' ? ids.invoice : null,
  }
  return { ...envelope('checkout.session.completed', apiVersion), data: { object } }
}

/** invoice.paid on a basil or later endpoint: the subscription in parent.subscription_details, no PaymentIntent. */
export function invoicePaid(ids: PaymentIds, billingReason: 'subscription_create' | 'subscription_cycle', apiVersion: string = Stripe.API_VERSION): StripeWebhookBody {
  const object: InvoiceBody = {
    ...invoiceFields(ids, billingReason),
    parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: ids.subscription, metadata: { order_id: `order-${ids.subscription}` } } },
  }
  return { ...envelope('invoice.paid', apiVersion), data: { object } }
}

/** invoice.paid before basil: `subscription`, `subscription_details` and `payment_intent` on the invoice. */
export function legacyInvoicePaid(ids: PaymentIds, billingReason: 'subscription_create' | 'subscription_cycle', apiVersion: string): StripeWebhookBody {
  const object: LegacyInvoiceBody = {
    ...invoiceFields(ids, billingReason),
    subscription: ids.subscription, payment_intent: ids.intent, paid: true, subscription_details: { metadata: { order_id: `order-${ids.subscription}` } },
  }
  return { ...envelope('invoice.paid', apiVersion), data: { object } }
}

function invoiceFields(ids: PaymentIds, billingReason: Stripe.Invoice.BillingReason) {
  return {
    id: ids.invoice, object: 'invoice' as const, billing_reason: billingReason, amount_paid: 2900, currency: 'eur', status: 'paid' as const,
    customer_email: CUSTOMER.email, customer_name: CUSTOMER.name, customer_phone: CUSTOMER.phone, customer_address: ADDRESS, metadata: {},
  }
}

/** invoice_payment.paid: the InvoicePayment linking the invoice to the PaymentIntent that paid it. */
export function invoicePaymentPaid(ids: PaymentIds, apiVersion: string = Stripe.API_VERSION): StripeWebhookBody {
  const object: InvoicePaymentBody = {
    id: `inpay_${ids.invoice.slice(3)}`, object: 'invoice_payment', invoice: ids.invoice, status: 'paid', amount_paid: 2900, amount_requested: 2900,
    currency: 'eur', is_default: true, payment: { type: 'payment_intent', payment_intent: ids.intent },
  }
  return { ...envelope('invoice_payment.paid', apiVersion), data: { object } }
}

/** payment_intent.succeeded; `invoice` is given only for API versions before basil (null for a one-time payment). */
export function intentSucceeded(ids: PaymentIds, options: { apiVersion?: string, invoice?: string | null } = {}): StripeWebhookBody {
  const intent: IntentBody = {
    id: ids.intent, object: 'payment_intent', amount: 2900, amount_received: 2900, currency: 'eur', status: 'succeeded',
    metadata: {}, receipt_email: CUSTOMER.email, shipping: null, latest_charge: `ch_${ids.intent.slice(3)}`,
  }
  const object: IntentBody | LegacyIntentBody = options.invoice === undefined ? intent : { ...intent, invoice: options.invoice }
  return { ...envelope('payment_intent.succeeded', options.apiVersion ?? Stripe.API_VERSION), data: { object } }
}

/** Every order of `items`. */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]]
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]))
}

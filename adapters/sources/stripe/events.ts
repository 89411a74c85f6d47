/** The Stripe event types dcgate reads payments from (refunds: refund.ts). README.md, "Set up in Stripe". */
export const SESSION_EVENTS = ['checkout.session.completed', 'checkout.session.async_payment_succeeded'] as const
export const INTENT_EVENT = 'payment_intent.succeeded'
/** Both name the same paid invoice. */
export const INVOICE_EVENTS = ['invoice.paid', 'invoice.payment_succeeded'] as const
/** Since API version 2025-03-31.basil the only link from an invoice to the PaymentIntent that paid it. */
export const INVOICE_PAYMENT_EVENT = 'invoice_payment.paid'

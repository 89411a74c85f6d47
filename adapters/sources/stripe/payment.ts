/** One Stripe payment as a dcgate conversion: the fields every payment object shares, read the same way. */
import type { SourceConversion } from '../../../core/registry.ts'
import { clickIdsFrom } from '../click-ids.ts'
import { compact, fail, idAt, objectAt, textAt, type JsonObject } from '../fields.ts'
import { fromMinorUnits } from './currency.ts'

export interface Payment {
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

export function toConversion(payment: Payment, eventName: string): SourceConversion {
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

/** An id Stripe sends as a string, or as the object when the field is expanded. */
export function expandableIdAt(value: unknown, path: string): string | undefined {
  return typeof value === 'object' && value !== null ? idAt((value as JsonObject).id, `${path}.id`) : idAt(value, path)
}

/** The messageId of a payment made by a PaymentIntent (a Checkout Session in payment mode, or the intent itself). */
export const intentMessageId = (intent: string) => `stripe-pi-${intent}`
/** The messageId of a subscription's first payment (its Checkout Session, or its first invoice). */
export const subscriptionMessageId = (subscription: string) => `stripe-sub-${subscription}`

/**
 * Stripe refunds as refunds of the stored payment (README.md, "Refunds"). dcgate keys a Stripe payment by its
 * PaymentIntent (`stripe-pi-<id>`), so a refund is linked through the PaymentIntent it names.
 */
import type { SourceParseResult, SourceRefund } from '../../../core/registry.ts'
import { compact, currencyAt, fail, listAt, objectAt, requiredIdAt, textAt, unixSecondsAt, type JsonObject } from '../fields.ts'
import { expandableIdAt, intentMessageId, toValue } from './payment.ts'

export const REFUND_EVENTS = ['refund.created', 'charge.refunded'] as const

/** A refund in these states returns no money (yet): `failed`, `canceled`, or `requires_action` (the customer must act). */
const NOT_REFUNDED = new Set(['failed', 'canceled', 'requires_action'])

/** A refund.created or charge.refunded event; a reason instead when it refunds nothing dcgate can link. */
export function fromRefundEvent(type: string, object: JsonObject, createdAt: Date | undefined): SourceParseResult {
  if (type === 'refund.created') {
    const refund = toRefund(object, 'data.object')
    return typeof refund === 'string' ? { kind: 'ignored', reason: refund } : { kind: 'refund', refund, sourceEventType: type }
  }
  return fromRefundedCharge(object, createdAt, type)
}

/**
 * charge.refunded: the Charge, whose `refunds` list Stripe includes only when the endpoint expands it (not by default
 * since API version 2022-11-15). Listed refunds are read one by one (the same re_ ids refund.created brings); without
 * the list only a fully refunded charge (`refunded: true`) is recorded, as the whole value.
 */
function fromRefundedCharge(charge: JsonObject, createdAt: Date | undefined, type: string): SourceParseResult {
  const id = requiredIdAt(charge.id, 'data.object.id')
  const list = objectAt(charge.refunds, 'data.object.refunds')
  const listed = listAt(list?.data, 'data.object.refunds.data').map((entry, index) => toRefund(objectAt(entry, `data.object.refunds.data[${index}]`) ?? fail(`data.object.refunds.data[${index}]`, 'must be an object'), `data.object.refunds.data[${index}]`))
  const refunds = listed.filter((r): r is SourceRefund => typeof r !== 'string')
  if (charge.refunded === true) {
    const intent = expandableIdAt(charge.payment_intent, 'data.object.payment_intent')
    if (!intent) return { kind: 'ignored', reason: unlinked(`charge ${id}`) }
    refunds.push(compact({ orderId: orderIdOf(charge, intent), messageId: intentMessageId(intent), refundId: `charge-${id}-refunded`, at: createdAt ?? new Date() }))
  }
  if (refunds.length > 0) return { kind: 'conversions', conversions: [], refunds, sourceEventType: type }
  return {
    kind: 'ignored',
    reason: typeof listed[0] === 'string' ? listed[0] : `charge ${id} is partly refunded and its refunds are not listed: subscribe to refund.created, which brings each refund`,
  }
}

/** A Refund object; a reason instead when it returns no money or names no PaymentIntent. */
function toRefund(refund: JsonObject, path: string): SourceRefund | string {
  const id = requiredIdAt(refund.id, `${path}.id`)
  const status = textAt(refund.status, `${path}.status`)
  if (status && NOT_REFUNDED.has(status)) return `refund ${id} is ${status}: no money was returned`
  const intent = expandableIdAt(refund.payment_intent, `${path}.payment_intent`)
  if (!intent) return unlinked(`refund ${id}`)
  const currency = currencyAt(refund.currency, `${path}.currency`)
  return compact({
    orderId: orderIdOf(refund, intent),
    messageId: intentMessageId(intent),
    refundId: id,
    amount: toValue(refund.amount, `${path}.amount`, currency),
    currency,
    at: unixSecondsAt(refund.created, `${path}.created`) ?? new Date(),
  } satisfies SourceRefund)
}

/** The object's own `metadata.order_id` when the shop sets one on refunds, else the PaymentIntent (dcgate's default order id). */
function orderIdOf(object: JsonObject, intent: string): string {
  return textAt(objectAt(object.metadata, 'data.object.metadata')?.order_id, 'data.object.metadata.order_id', 255) ?? intent
}

const unlinked = (what: string) =>
  `${what} names no PaymentIntent (a charge made without one, e.g. the legacy Charges API): dcgate keys Stripe payments by PaymentIntent and cannot link it`

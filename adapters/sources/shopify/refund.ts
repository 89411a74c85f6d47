/** Shopify refunds and cancellations as refunds of the stored order (README.md, "Refunds and cancellations"). */
import type { SourceRefund } from '../../../core/registry.ts'
import { compact, currencyAt, fail, instantAt, listAt, moneyAt, objectAt, requiredIdAt, textAt, type JsonObject } from '../fields.ts'

export const REFUND_TOPIC = 'refunds/create'
export const CANCELLED_TOPIC = 'orders/cancelled'
export const UPDATED_TOPIC = 'orders/updated'

/**
 * A refunds/create body (a REST Refund): what its successful `refund` transactions returned, summed; undefined when
 * it returned no money (a restock or a note only), which records nothing.
 */
export function toShopifyRefund(refund: JsonObject): SourceRefund | undefined {
  let amount = 0
  let currency: string | undefined
  let paid = false
  listAt(refund.transactions, 'transactions').forEach((entry, index) => {
    const path = `transactions[${index}]`
    const transaction = objectAt(entry, path) ?? fail(path, 'must be an object')
    if (textAt(transaction.kind, `${path}.kind`) !== 'refund' || textAt(transaction.status, `${path}.status`) !== 'success') return
    const value = moneyAt(transaction.amount, `${path}.amount`) ?? fail(`${path}.amount`, 'is required')
    const code = currencyAt(transaction.currency, `${path}.currency`)
    if (currency && code && code !== currency) fail(`${path}.currency`, `differs from an earlier transaction's ${currency}`)
    currency ??= code
    amount += value
    paid = true
  })
  if (!paid || amount <= 0) return undefined
  return compact({
    orderId: requiredIdAt(refund.order_id, 'order_id'),
    refundId: `refund-${requiredIdAt(refund.id, 'id')}`,
    amount: Math.round(amount * 100) / 100,
    currency,
    at: instantAt(refund.processed_at, 'processed_at') ?? instantAt(refund.created_at, 'created_at') ?? new Date(),
  } satisfies SourceRefund)
}

/** An orders/cancelled body (a REST Order): the whole order, once, dated by `cancelled_at`. */
export function toShopifyCancellation(order: JsonObject): SourceRefund {
  return {
    orderId: requiredIdAt(order.id, 'id'),
    refundId: 'cancelled',
    at: instantAt(order.cancelled_at, 'cancelled_at') ?? instantAt(order.updated_at, 'updated_at') ?? new Date(),
  }
}

/**
 * An orders/updated body: only `financial_status: refunded` (the whole order refunded) is a refund; any other update,
 * partially_refunded included (refunds/create carries its amount), records nothing.
 */
export function toShopifyRefundedOrder(order: JsonObject): SourceRefund | undefined {
  if (textAt(order.financial_status, 'financial_status') !== 'refunded') return undefined
  return {
    orderId: requiredIdAt(order.id, 'id'),
    refundId: 'financial_status-refunded',
    at: instantAt(order.updated_at, 'updated_at') ?? new Date(),
  }
}

/** WooCommerce refunds and cancellations as refunds of the stored order (README.md, "Refunds and cancellations"). */
import type { SourceRefund } from '../../../core/registry.ts'
import { compact, currencyAt, fail, instantAt, listAt, moneyAt, objectAt, requiredIdAt, textAt, type JsonObject } from '../fields.ts'

/** Statuses that take the whole order back (a full refund; a cancellation of an order that was paid). */
export const ENDED_STATUSES = new Set(['refunded', 'cancelled'])

/**
 * The refunds an order.created / order.updated body reports: each entry of `refunds` (`{ id, reason, total }`, total
 * negative, "-10.00") by its own id, and `status: refunded` or a paid order's `status: cancelled` as the whole value.
 * The order payload dates no refund: the update's `date_modified_gmt` stands for the refunds it shows for the first
 * time (one already counted keeps its first date). A cancelled order that was never paid records nothing.
 */
export function toWooRefunds(order: JsonObject, orderId: string): SourceRefund[] {
  const at = instantAt(order.date_modified_gmt, 'date_modified_gmt', true) ?? instantAt(order.date_modified, 'date_modified') ?? new Date()
  const currency = currencyAt(order.currency, 'currency')
  const refunds: SourceRefund[] = listAt(order.refunds, 'refunds').map((entry, index) => {
    const path = `refunds[${index}]`
    const refund = objectAt(entry, path) ?? fail(path, 'must be an object')
    const total = moneyAt(refund.total, `${path}.total`) ?? fail(`${path}.total`, 'is required')
    return compact({ orderId, refundId: `refund-${requiredIdAt(refund.id, `${path}.id`)}`, amount: Math.abs(total), currency, at } satisfies SourceRefund)
  })
  const status = textAt(order.status, 'status')
  const paid = Boolean(order.date_paid_gmt ?? order.date_paid)
  if (status === 'refunded' || (status === 'cancelled' && paid)) refunds.push({ orderId, refundId: `status-${status}`, at })
  return refunds
}

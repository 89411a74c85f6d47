import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A refund that arrived before its order (core/delivery/queries/refunds.ts): kept until a conversion of the order is
 * stored, then applied and removed; purged after 30 days. It holds no personal data (an order id, amounts, times),
 * so a DSAR erasure has nothing to remove here.
 */
export const PendingRefund = defineEntity({
  name: 'PendingRefund',
  tableName: 'pending_refunds',
  indexes: [{ properties: ['createdAt'] }],
  properties: {
    siteId: p.string().length(64).primary(),
    orderId: p.string().length(255).primary(),
    refundId: p.string().length(255).primary(),
    /** The purchase's messageId when the refund names the payment (a Stripe PaymentIntent). */
    messageId: p.string().length(255).nullable(),
    /** Null: the whole value (a cancellation or full refund). */
    amount: p.double().nullable(),
    currency: p.string().length(3).nullable(),
    refundedAt: p.datetime(6),
    createdAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IPendingRefund = InferEntity<typeof PendingRefund>

import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * Withdrawals of webhook conversions that wait before they are sent (core/delivery/queries/waits.ts), one row per
 * messageId, written by both sides so that whichever writes second sees the other. Purged after 30 days. It holds no
 * personal data (a vendor's payment id, event types and a reason), so a DSAR erasure has nothing here.
 */
export const ConversionWait = defineEntity({
  name: 'ConversionWait',
  tableName: 'conversion_waits',
  indexes: [{ properties: ['createdAt'] }],
  properties: {
    siteId: p.string().length(64).primary(),
    messageId: p.string().length(255).primary(),
    /** The webhook event types whose conversion of this messageId is withdrawn (its `source_event_type`); empty while none is. */
    withdrawnTypes: p.array().columnType('text[]').default('{}'),
    /** Why, from the first withdrawal; null while none came. */
    reason: p.text().nullable(),
    createdAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IConversionWait = InferEntity<typeof ConversionWait>

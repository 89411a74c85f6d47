import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A webhook conversion stored waiting for a later webhook to withdraw it, and withdrawals that came first
 * (core/delivery/queries/waits.ts). One row per messageId: whichever side writes it second sees the other. Purged
 * after 30 days. It holds no personal data (a vendor's payment id and a reason), so a DSAR erasure has nothing here.
 */
export const ConversionWait = defineEntity({
  name: 'ConversionWait',
  tableName: 'conversion_waits',
  indexes: [{ properties: ['createdAt'] }],
  properties: {
    siteId: p.string().length(64).primary(),
    messageId: p.string().length(255).primary(),
    /** A conversion with this messageId is stored and waits (its deliveries are due after the wait). */
    waiting: p.boolean().default(false),
    /** Why it is withdrawn (set by the first withdrawal); null while none came. */
    withdrawn: p.text().nullable(),
    createdAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IConversionWait = InferEntity<typeof ConversionWait>

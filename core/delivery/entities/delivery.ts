import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * One conversion at one platform: the transactional outbox. Written with the conversion when the worker is to send
 * it; for the inline attempt the conversion holds it (`inlineDeliveries`) and the attempt's record writes this row
 * once, in its final state. A worker claims due rows with a lease (`lockedUntil`), and sweeps the held deliveries of
 * a process that died into rows, so a crash loses nothing.
 * A refund of a delivered conversion is a row of its own (`kind` adjustment), sent, retried and reported the same way.
 */
export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'deliveries',
  // A refund is written once per conversion and platform: a retried refund (or a second hook call) adds nothing.
  // Its first column serves the lookups by conversion too (no index of conversion_id alone: migration 20261128150000).
  uniques: [{ name: 'deliveries_refund_unique', properties: ['conversionId', 'provider', 'refundId'] }],
  indexes: [
    // The worker's claim: due rows of one platform account. Partial, so a row that ended leaves it, and the claim (which
    // changes no indexed column) can be a HOT update in the room the table's fillfactor leaves (migration 20261126…).
    { name: 'deliveries_due_index', expression: 'create index "deliveries_due_index" on "deliveries" ("site_id", "provider", "next_attempt_at") where "status" in (\'pending\', \'retrying\')' },
    { properties: ['siteId', 'createdAt', 'id'] },
    // The export of validated conversions pages over sent deliveries, one key per conversion (plugins/export).
    { name: 'deliveries_sent_paging_index', expression: 'create index "deliveries_sent_paging_index" on "deliveries" ("site_id", "created_at", "conversion_id") where "status" = \'sent\'' },
    // Deliveries not yet ended: the export holds its horizon before the oldest one whose conversion has nothing sent yet.
    { name: 'deliveries_unsettled_index', expression: 'create index "deliveries_unsettled_index" on "deliveries" ("site_id", "created_at") where "status" in (\'pending\', \'retrying\')' },
  ],
  properties: {
    id: p.uuid().primary(),
    conversionId: p.uuid(),
    siteId: p.string().length(64),
    provider: p.string().length(32),
    /** `conversion`: the conversion itself; `adjustment`: a refund of it (core/delivery/adjust.ts). */
    kind: p.string().length(16).default('conversion'),
    /** An adjustment's refund id (the vendor's); null for a conversion row. */
    refundId: p.string().length(255).nullable(),
    /** What an adjustment tells the platform ({ type: retraction | restatement, at, value?, currency? }). */
    adjustment: p.json<Record<string, unknown>>().nullable(),
    /** Which rule shaped a sent request when it differs from the usual one (a lead qualified after the platform's window). */
    note: p.text().nullable(),
    /** pending | retrying | sent | failed | skipped */
    status: p.string().length(16),
    attempts: p.integer().default(0),
    httpStatus: p.integer().nullable(),
    /** The platform's own message, or why it was skipped or failed. */
    error: p.text().nullable(),
    nextAttemptAt: p.datetime(6).defaultRaw('now()'),
    lockedUntil: p.datetime(6).nullable(),
    lastDurationMs: p.integer().nullable(),
    sentAt: p.datetime(6).nullable(),
    createdAt: p.datetime(6).defaultRaw('now()'),
    updatedAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IDelivery = InferEntity<typeof Delivery>

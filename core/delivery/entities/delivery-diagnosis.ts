import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A delivery a platform took and judges later (Google's Data Manager API processes a request after answering it):
 * `receipt` is the platform's id of the request, `dueAt` the next look at its status (null once final), `diagnosis`
 * what the platform said, for the delivery report. Reason codes and counts only, no personal data. Written only by
 * SQL (core/delivery/queries/diagnostics.ts).
 */
export const DeliveryDiagnosis = defineEntity({
  name: 'DeliveryDiagnosis',
  tableName: 'delivery_diagnostics',
  indexes: [
    { name: 'delivery_diagnostics_due_index', expression: 'create index "delivery_diagnostics_due_index" on "delivery_diagnostics" ("due_at") where "due_at" is not null' },
  ],
  properties: {
    deliveryId: p.uuid().primary(),
    siteId: p.string().length(64),
    provider: p.string().length(32),
    receipt: p.string().length(255),
    requestedAt: p.datetime(6),
    dueAt: p.datetime(6).nullable(),
    diagnosis: p.text().nullable(),
    updatedAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IDeliveryDiagnosis = InferEntity<typeof DeliveryDiagnosis>

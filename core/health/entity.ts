import { defineEntity, p } from '@mikro-orm/core'

/**
 * One row per site, destination and alert cause (core/health/alerts.ts): whether the cause holds now, since when,
 * and whether its alert went out, so the one instance that evaluates (a cluster job) sends each alert once, at most
 * once an hour, and a "recovered" message when it clears. Written only by core/health/queries.ts.
 */
export const DeliveryAlert = defineEntity({
  name: 'DeliveryAlert',
  tableName: 'delivery_alerts',
  primaryKeys: ['siteId', 'provider', 'cause'],
  properties: {
    siteId: p.string().length(64).primary(),
    provider: p.string().length(32).primary(),
    /** failure-rate | credentials | sunset */
    cause: p.string().length(16).primary(),
    active: p.boolean(),
    /** Whether the alert of the current episode was sent (so its clearing sends "recovered"). */
    notified: p.boolean().default(false),
    /** When the cause began to hold (this episode), or when it cleared. */
    since: p.datetime(6),
    /** What was found, in words, for the message and the dashboard. */
    detail: p.text().nullable(),
    /** When an alert for this cause was last sent: the once-an-hour rule. */
    alertedAt: p.datetime(6).nullable(),
    updatedAt: p.datetime(6).defaultRaw('now()'),
  },
})

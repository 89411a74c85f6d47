import { defineEntity, p } from '@mikro-orm/core'

/**
 * One dashboard action: who (the operator or a member's address), what, when, on which site (none for a sign-in).
 * Written only by plugins/dashboard/queries/audit.ts; never updated or deleted by dcgate.
 */
export const DashboardAudit = defineEntity({
  name: 'DashboardAudit',
  tableName: 'dashboard_audit',
  indexes: [{ properties: ['siteId', 'createdAt', 'id'] }, { properties: ['createdAt'] }],
  properties: {
    id: p.uuid().primary().defaultRaw('gen_random_uuid()'),
    siteId: p.string().length(64).nullable(),
    actor: p.string().length(320),
    action: p.string().length(100),
    detail: p.string().length(1000).nullable(),
    createdAt: p.datetime(6).defaultRaw('now()'),
  },
})

/**
 * Sign-in links already used, by the SHA-256 of their token: the insert that claims one succeeds once across every
 * instance (the link itself lives in the shared storage, which has no atomic get-and-delete). Kept a day, far past
 * a link's life; written only by plugins/dashboard/queries/links.ts.
 */
export const DashboardUsedLink = defineEntity({
  name: 'DashboardUsedLink',
  tableName: 'dashboard_used_links',
  indexes: [{ properties: ['usedAt'] }],
  properties: {
    tokenHash: p.string().length(64).primary(),
    usedAt: p.datetime(6).defaultRaw('now()'),
  },
})

/**
 * The live events: the last requests that reached each site (hits, identifies, conversions, Segment messages,
 * webhooks), accepted or refused, with nothing personal (core/http/answered.ts). Written in batches by
 * plugins/dashboard/live/recorder.ts, pruned to the newest few hundred per site (docs/architecture.md, "Live events").
 */
export const DashboardLiveRequest = defineEntity({
  name: 'DashboardLiveRequest',
  tableName: 'dashboard_live_requests',
  indexes: [{ properties: ['siteId', 'at'] }],
  properties: {
    id: p.uuid().primary().defaultRaw('gen_random_uuid()'),
    siteId: p.string().length(64),
    at: p.datetime(6),
    kind: p.string().length(16),
    method: p.string().length(8),
    route: p.string().length(200),
    source: p.string().length(64).nullable(),
    status: p.integer(),
    code: p.string().length(64).nullable(),
    reason: p.string().length(1000).nullable(),
    refused: p.integer().nullable(),
  },
})

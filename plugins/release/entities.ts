import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * Where each site's CRM poller stands: its cursor, and a lease so that one instance polls at a time. A row per
 * site and poller, created on the first run.
 */
export const CrmPollState = defineEntity({
  name: 'CrmPollState',
  tableName: 'crm_poll_state',
  primaryKeys: ['siteId', 'poller'],
  properties: {
    siteId: p.string().length(64).primary(),
    poller: p.string().length(32).primary(),
    /** Opaque to dcgate; the poller's own position (e.g. the last modified time it saw). */
    cursor: p.text().nullable(),
    nextRunAt: p.datetime(6).defaultRaw('now()'),
    lockedUntil: p.datetime(6).nullable(),
    lastRunAt: p.datetime(6).nullable(),
    lastReleased: p.integer().default(0),
    lastError: p.text().nullable(),
    /**
     * The newest refresh token the CRM issued in place of the configured one (Salesforce's refresh-token rotation),
     * sealed with the server secret (core/secrets/keyring.ts; a token stored in clear before is no longer read), and the hash of the configured credentials it descends from: a changed
     * configuration starts again from its own token.
     */
    issuedToken: p.text().nullable(),
    issuedFor: p.string().length(64).nullable(),
  },
})
export type ICrmPollState = InferEntity<typeof CrmPollState>

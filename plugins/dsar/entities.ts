import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/** One entry of a request's merchant log: what happened, when; never the email. */
export interface MerchantLogEntry {
  at: string
  event: string
  detail?: string
  records?: number
}

/**
 * A data deletion request (spec "Deletion records"): the proof a site owner shows a regulator. The raw email is
 * kept only while it is needed (to run the erasure once confirmed, and to send the completion mail), then
 * cleared; the hard purge clears whatever is left. `emailKey` is a keyed hash (HMAC with the site's secret) that
 * enforces one request per email and site per 24 hours, removed once the window has passed.
 */
export const DeletionRequest = defineEntity({
  name: 'DeletionRequest',
  tableName: 'deletion_requests',
  uniques: [{ properties: ['code'] }, { properties: ['tokenHash'] }],
  indexes: [
    { properties: ['siteId', 'emailKey'] },
    { properties: ['hardPurgeAt'] },
  ],
  properties: {
    id: p.uuid().primary(),
    siteId: p.string().length(64),
    /** The confirmation code: the proof's address (GET /public/dsar/proof/:code). */
    code: p.string().length(64),
    /** public (the form, confirmed by email) | api (POST /api/v1/data-deletion) */
    source: p.string().length(16),
    /** received | processing | completed */
    status: p.string().length(16),
    /** Normalised; cleared once completed (api) or once the completion mail went out (public), else at the purge. */
    email: p.string().nullable(),
    emailKey: p.string().length(64).nullable(),
    maskedEmail: p.string(),
    /** SHA-256 of the single-use confirmation token the person was mailed; the token itself is never stored. */
    tokenHash: p.string().length(64).nullable(),
    /** The page the form was on, without query or fragment; for the site owner's records. */
    pageUrl: p.text().nullable(),
    receivedAt: p.datetime(6).defaultRaw('now()'),
    processingAt: p.datetime(6).nullable(),
    completedAt: p.datetime(6).nullable(),
    hardPurgeAt: p.datetime(6),
    purgedAt: p.datetime(6).nullable(),
    /** A claim on the next step (erasure or completion mail); another instance or the job takes over once it passed. */
    lockedUntil: p.datetime(6).nullable(),
    integrationsAffected: p.integer().default(0),
    sessionRecordsAnonymised: p.integer().default(0),
    completionEmailSentAt: p.datetime(6).nullable(),
    merchantLog: p.json<MerchantLogEntry[]>().defaultRaw(`'[]'::jsonb`),
  },
})
export type IDeletionRequest = InferEntity<typeof DeletionRequest>

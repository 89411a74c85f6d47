import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A person a site identified by email (dcutils.identifyUser or a mapped form), one row per site and email.
 * The email is kept in clear because the export of identified users lists it; it is erasable (DSAR).
 */
export const IdentifiedUser = defineEntity({
  name: 'IdentifiedUser',
  tableName: 'identified_users',
  uniques: [{ properties: ['siteId', 'emailHash'] }],
  // (siteId, lastSeenAt): the capture retention deletes those not seen for a while.
  indexes: [{ properties: ['siteId', 'identifiedAt', 'id'] }, { properties: ['siteId', 'deviceHash'] }, { properties: ['siteId', 'lastSeenAt'] }],
  properties: {
    id: p.uuid().primary(),
    siteId: p.string().length(64),
    email: p.string(),
    /** SHA-256 of the normalised email (core/identity), how visits and conversions find this person. */
    emailHash: p.string().length(64),
    /** client_sdk | form */
    source: p.string().length(32),
    sessionId: p.string().length(128).nullable(),
    visitorId: p.string().length(64).nullable(),
    deviceHash: p.string().length(64).nullable(),
    ipCountry: p.string().length(2).nullable(),
    ipIsVpn: p.boolean().default(false),
    /** Set by the email-risk plugin through the capture:identify hook, when loaded. */
    emailRiskScore: p.integer().nullable(),
    emailRiskLabel: p.string().length(32).nullable(),
    isDisposable: p.boolean().nullable(),
    identifiedAt: p.datetime(6).defaultRaw('now()'),
    lastSeenAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IIdentifiedUser = InferEntity<typeof IdentifiedUser>

import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import type { DeviceFingerprint, EmailInfo } from './result.ts'

/**
 * The assessment of one email on one site, made by a live check or at identification; a later check answers from
 * it (spec: "answered from stored data, no new lookup"). Holds the email inside `emailInfo`: erased with the
 * person (dsar:erase).
 */
export const EmailRiskResult = defineEntity({
  name: 'EmailRiskResult',
  tableName: 'email_risk_results',
  uniques: [{ properties: ['siteId', 'emailHash'] }],
  properties: {
    id: p.uuid().primary(),
    siteId: p.string().length(64),
    /** SHA-256 of the normalised email (core/identity), as identified_users.email_hash. */
    emailHash: p.string().length(64),
    emailInfo: p.json<EmailInfo>(),
    /** The device fingerprint the identification carried (confidence and version are not kept elsewhere). */
    device: p.json<DeviceFingerprint>().nullable(),
    checkedAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IEmailRiskResult = InferEntity<typeof EmailRiskResult>

/** Every email check a site made, for life: the first 500 are free (spec "Limits"); `billable` counts the rest. */
export const EmailCheckQuota = defineEntity({
  name: 'EmailCheckQuota',
  tableName: 'email_check_quotas',
  properties: {
    siteId: p.string().length(64).primary(),
    checks: p.integer().default(0),
    billable: p.integer().default(0),
    firstCheckAt: p.datetime(6).defaultRaw('now()'),
    lastCheckAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IEmailCheckQuota = InferEntity<typeof EmailCheckQuota>

/** The same counts per calendar month (UTC), for invoices: `dcgate usage --site <id>`. */
export const EmailCheckMonth = defineEntity({
  name: 'EmailCheckMonth',
  tableName: 'email_check_months',
  properties: {
    siteId: p.string().length(64).primary(),
    /** YYYY-MM, UTC. */
    month: p.string().length(7).primary(),
    checks: p.integer().default(0),
    billable: p.integer().default(0),
  },
})
export type IEmailCheckMonth = InferEntity<typeof EmailCheckMonth>

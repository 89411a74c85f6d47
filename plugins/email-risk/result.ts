/**
 * The data of POST /api/v1/services/email/check (spec: "Email check result"), as valibot schemas: they feed
 * /openapi.json, the tests check answers against them, and the types below are inferred from them.
 * docs/api/email-check.md shows every field with examples.
 */
import * as v from 'valibot'

export const ACTIONS = ['ALLOW', 'CHALLENGE', 'BLOCK'] as const
export const RISK_LABELS = ['low', 'medium', 'high', 'critical'] as const
/** mx | implicit (no MX, but an address mail is delivered to) | none | unknown. */
export const MAIL_SERVERS = ['mx', 'implicit', 'none', 'unknown'] as const

const Iso = v.pipe(v.string(), v.isoTimestamp())
const NullableIso = v.nullable(Iso)

export const EmailInfoSchema = v.object({
  normalized_email: v.string(),
  domain: v.string(),
  action: v.picklist(ACTIONS),
  risk_score: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100)),
  risk_label: v.picklist(RISK_LABELS),
  /** One sentence per signal that fired; `tags[i]` is the stable code of `reasons[i]`. */
  reasons: v.array(v.string()),
  tags: v.array(v.string()),
  /** The address with the likely intended domain (john.doe@gmial.com → john.doe@gmail.com), else null. */
  suggestion: v.nullable(v.string()),
  fraud_signals: v.object({
    disposable_domain: v.boolean(),
    /** example.com, example.net, example.org and the .test, .example, .invalid, .localhost names (RFC 2606). */
    reserved_domain: v.boolean(),
    identity_flags: v.object({ gibberish_username: v.boolean(), bulk_pattern: v.boolean(), plus_addressing: v.boolean(), free_provider: v.boolean() }),
    /** null: not known (RDAP unreachable or no date published; a well-known provider is not looked up). */
    domain_maturity: v.object({ age_days: v.nullable(v.number()), registered_at: NullableIso, young_domain: v.nullable(v.boolean()) }),
    mail_server: v.picklist(MAIL_SERVERS),
  }),
  digital_footprint: v.object({ likely_real_person: v.boolean() }),
  /** When the assessment was made: a stored answer keeps the time of the check or identification that made it. */
  checked_at: Iso,
  /** stored: the email was already known on the site, no lookup was made; live: assessed now. */
  answered_from: v.picklist(['stored', 'live']),
})

export const DeviceFingerprintSchema = v.object({
  hash: v.string(),
  short: v.string(),
  /** 0–1 as the tracking script reported it; null when the identification did not carry it. */
  confidence: v.nullable(v.number()),
  /** The fingerprint recipe's version; null when not carried. */
  version: v.nullable(v.number()),
})

export const UserInfoSchema = v.object({
  /** Other emails identified on the site from the same device, most recently seen first (at most 20). */
  related_emails: v.array(v.string()),
  related_email_count: v.number(),
  deviceFingerprint: v.nullable(DeviceFingerprintSchema),
  /** How the email became known: client_sdk or form (tracking script), server_sdk (an earlier email check). */
  source: v.string(),
  first_seen_at: Iso,
})

/** The network of the latest identified visit (capture's visit intel). */
export const IpInfoSchema = v.object({
  ip: v.nullable(v.string()),
  country: v.nullable(v.string()),
  city: v.nullable(v.string()),
  isp: v.nullable(v.string()),
  organization: v.nullable(v.string()),
  asn: v.nullable(v.number()),
  is_vpn: v.boolean(),
  is_proxy: v.boolean(),
  is_tor: v.boolean(),
  is_hosting: v.boolean(),
  seen_at: NullableIso,
})

export const EmailCheckAnswerSchema = v.object({
  success: v.literal(true),
  data: v.object({
    emailInfo: EmailInfoSchema,
    /** null until the email was identified on the site (or checked before). */
    userInfo: v.nullable(UserInfoSchema),
    /** null when the email never came with a visit. */
    ipInfo: v.nullable(IpInfoSchema),
  }),
})

export type Action = typeof ACTIONS[number]
export type RiskLabel = typeof RISK_LABELS[number]
export type EmailInfo = v.InferOutput<typeof EmailInfoSchema>
export type DeviceFingerprint = v.InferOutput<typeof DeviceFingerprintSchema>
export type UserInfo = v.InferOutput<typeof UserInfoSchema>
export type IpInfo = v.InferOutput<typeof IpInfoSchema>
export type EmailCheckData = v.InferOutput<typeof EmailCheckAnswerSchema>['data']

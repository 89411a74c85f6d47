/**
 * From signals to a verdict (pure). Each rule that fires adds its points (the sum is capped at 100) and one
 * reason with its stable code; then the action follows from a few hard rules and the score. The table of rules is
 * the documentation: ../README.md#scoring repeats it, test/email-risk/verdicts.test.ts pins it.
 */
import type { Action, EmailInfo, RiskLabel } from './result.ts'
import type { MailServer } from './signals/mx.ts'

export interface EmailSignals {
  email: string
  local: string
  domain: string
  /** A domain reserved for examples and tests (RFC 2606): example.com, *.test… No real person's address. */
  reserved: boolean
  disposable: boolean
  freeProvider: boolean
  /** The corrected domain of a likely typo. */
  suggestedDomain: string | undefined
  gibberish: boolean
  bulk: boolean
  plusAddressing: boolean
  mailServer: MailServer
  /** ISO date of the domain's registration; null unknown; 'known-old' for well-known providers (not looked up). */
  registeredAt: string | null | 'known-old'
  /**
   * Whether the domain's age and mail server were asked: `done` (asked, cached, or not needed), `offline` (an
   * identification from the browser, which never causes a lookup), `limited` (the site's lookups per minute were
   * used up). When not done, the two "unknown" reasons give way to the one that says why.
   */
  lookups: Lookups
}

export type Lookups = 'done' | 'offline' | 'limited'

/** The tags of an assessment made without the network signals it needed: a private check completes it. */
export const INCOMPLETE_TAGS: readonly string[] = ['scored_offline', 'lookup_limit_reached']

/** A domain younger than this is young_domain; younger than VERY_YOUNG_DAYS weighs more. */
export const YOUNG_DAYS = 180
export const VERY_YOUNG_DAYS = 30

interface Rule {
  code: string
  /** Points when the rule fires; a function when it depends on the signals. */
  points: number | ((s: EmailSignals, ageDays: number | null) => number)
  fires: (s: EmailSignals, ageDays: number | null) => boolean
  reason: (s: EmailSignals, ageDays: number | null) => string
}

const mailWorks = (s: EmailSignals) => s.mailServer === 'mx' || s.mailServer === 'implicit'

export const RULES: readonly Rule[] = [
  { code: 'reserved_domain', points: 100, fires: (s) => s.reserved, reason: (s) => `${s.domain} is reserved for examples and testing (RFC 2606); no real person's address uses it` },
  { code: 'disposable_domain', points: 100, fires: (s) => s.disposable, reason: (s) => `${s.domain} is a disposable (throwaway) email service` },
  { code: 'no_mail_server', points: 90, fires: (s) => s.mailServer === 'none', reason: (s) => `${s.domain} cannot receive email (no MX record, no address, or the domain does not exist)` },
  {
    code: 'domain_typo', points: (s) => (mailWorks(s) ? 20 : 35), fires: (s) => s.suggestedDomain !== undefined,
    reason: (s) => `${s.domain} looks like a typo of ${s.suggestedDomain}`,
  },
  { code: 'gibberish_username', points: 35, fires: (s) => s.gibberish, reason: () => 'The part before the @ looks random or keyboard-mashed' },
  { code: 'bulk_pattern', points: 35, fires: (s) => s.bulk, reason: () => 'The address follows a pattern of scripted or repeated sign-ups' },
  {
    code: 'young_domain', points: (_s, age) => ((age ?? Infinity) < VERY_YOUNG_DAYS ? 45 : 25), fires: (_s, age) => age !== null && age < YOUNG_DAYS,
    reason: (s, age) => `${s.domain} was registered ${age} day${age === 1 ? '' : 's'} ago`,
  },
  { code: 'plus_addressing', points: 10, fires: (s) => s.plusAddressing, reason: () => 'The address uses a +tag (one mailbox, many addresses)' },
  { code: 'free_provider', points: 0, fires: (s) => s.freeProvider, reason: (s) => `${s.domain} is a free email provider` },
  { code: 'domain_age_unknown', points: 0, fires: (s) => s.registeredAt === null && !s.disposable && !s.reserved && s.lookups === 'done', reason: () => 'The domain\'s age is not known (RDAP gave no registration date, or did not answer)' },
  { code: 'mail_server_unknown', points: 0, fires: (s) => s.mailServer === 'unknown' && !s.disposable && !s.reserved && s.lookups === 'done', reason: () => 'The mail server could not be checked (DNS did not answer)' },
  {
    code: 'scored_offline', points: 0, fires: (s) => s.lookups === 'offline',
    reason: (s) => `Scored offline at identification: ${s.domain}'s age and mail server were not looked up (a private email check looks them up)`,
  },
  {
    code: 'lookup_limit_reached', points: 0, fires: (s) => s.lookups === 'limited',
    reason: (s) => `${s.domain}'s age and mail server were not looked up: the site's network lookups for this minute are used up (emailRisk.lookupsPerMinute)`,
  },
]

export function toRiskLabel(score: number): RiskLabel {
  if (score >= 85) return 'critical'
  if (score >= 60) return 'high'
  if (score >= 30) return 'medium'
  return 'low'
}

/**
 * BLOCK a reserved or disposable domain; CHALLENGE a likely typo (ask the person to correct it, even when the mistyped domain
 * gets no mail); BLOCK a domain that cannot receive mail; then by score: 85+ BLOCK, 30+ CHALLENGE, else ALLOW.
 */
export function toAction(score: number, s: EmailSignals): Action {
  if (s.reserved || s.disposable) return 'BLOCK'
  if (s.suggestedDomain) return 'CHALLENGE'
  if (s.mailServer === 'none' || score >= 85) return 'BLOCK'
  return score >= 30 ? 'CHALLENGE' : 'ALLOW'
}

/** The emailInfo of the spec for these signals, assessed at `now`. */
export function scoreEmail(s: EmailSignals, now: Date, answeredFrom: EmailInfo['answered_from']): EmailInfo {
  const ageDays = s.registeredAt && s.registeredAt !== 'known-old'
    ? Math.max(0, Math.floor((now.getTime() - Date.parse(s.registeredAt)) / 86_400_000))
    : null
  const fired = RULES.filter((rule) => rule.fires(s, ageDays))
  const points = fired.reduce((sum, rule) => sum + (typeof rule.points === 'number' ? rule.points : rule.points(s, ageDays)), 0)
  const score = Math.min(100, points)
  const youngDomain = ageDays !== null ? ageDays < YOUNG_DAYS : s.registeredAt === 'known-old' ? false : null
  return {
    normalized_email: s.email,
    domain: s.domain,
    action: toAction(score, s),
    risk_score: score,
    risk_label: toRiskLabel(score),
    reasons: fired.map((rule) => rule.reason(s, ageDays)),
    tags: fired.map((rule) => rule.code),
    suggestion: s.suggestedDomain ? `${s.local}@${s.suggestedDomain}` : null,
    fraud_signals: {
      disposable_domain: s.disposable,
      reserved_domain: s.reserved,
      identity_flags: { gibberish_username: s.gibberish, bulk_pattern: s.bulk, plus_addressing: s.plusAddressing, free_provider: s.freeProvider },
      domain_maturity: { age_days: ageDays, registered_at: s.registeredAt === 'known-old' ? null : s.registeredAt, young_domain: youngDomain },
      mail_server: s.mailServer,
    },
    digital_footprint: {
      likely_real_person: !s.reserved && !s.disposable && !s.gibberish && !s.bulk && s.mailServer !== 'none' && score < 60,
    },
    checked_at: now.toISOString(),
    answered_from: answeredFrom,
  }
}

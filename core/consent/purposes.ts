/**
 * Consent per purpose: what a visitor allowed, in four purposes, whichever tool asked them (dcgate's banner, the
 * site's TCF or GPP consent platform, Google Consent Mode). Stored per visit (`visits.consent_purposes`) and per
 * conversion (`conversions.consent_purposes`); docs/privacy.md maps each source onto them. Pure.
 */

export const PURPOSES = ['measurement', 'advertising', 'ad_user_data', 'ad_personalization'] as const
export type Purpose = typeof PURPOSES[number]
export type Signal = 'granted' | 'denied'

/** Where a consent came from; the site's `consent.source` names the same tools. */
export const CONSENT_SOURCES = ['tcf', 'consent-mode', 'gpp', 'banner', 'manual'] as const
export type ConsentSource = typeof CONSENT_SOURCES[number]

export interface ConsentPurposes {
  source: ConsentSource
  /** Visits and page views measured with identifiers (TCF purpose 1; Consent Mode analytics_storage). */
  measurement?: Signal
  /** Conversions sent to ad platforms at all (TCF purposes 1 and 7; Consent Mode ad_storage). */
  advertising?: Signal
  /** Personal data sent to ad platforms with the conversion (TCF purposes 1 and 7; Consent Mode ad_user_data). */
  ad_user_data?: Signal
  /** Ads personalised from it, remarketing (TCF purposes 3 and 4; Consent Mode ad_personalization). */
  ad_personalization?: Signal
  /** dcgate platforms refused as vendors: by the TC string (GVL id without consent) or Google's Additional Consent string (ATP shown without consent). */
  vendors_denied?: string[]
  /** A US state section of a GPP string says the person opted out of sale, sharing or targeted advertising. */
  us_opt_out?: boolean
}

/** Consent Mode's four signals, as `gtag('consent', 'update', {...})` and a server conversion give them. */
export interface ConsentModeSignals {
  ad_storage?: Signal
  analytics_storage?: Signal
  ad_user_data?: Signal
  ad_personalization?: Signal
}

/** Consent Mode → purposes (https://developers.google.com/tag-platform/security/guides/consent, read 2026-11-28). */
export function fromConsentMode(signals: ConsentModeSignals, source: ConsentSource = 'consent-mode'): ConsentPurposes {
  const out: ConsentPurposes = { source }
  if (signals.analytics_storage) out.measurement = signals.analytics_storage
  if (signals.ad_storage) out.advertising = signals.ad_storage
  if (signals.ad_user_data) out.ad_user_data = signals.ad_user_data
  if (signals.ad_personalization) out.ad_personalization = signals.ad_personalization
  return out
}

/** dcgate's one-bit banner (or `dcutils.consent('granted' | 'denied')`) as purposes: all of them, or none. */
export function fromChoice(choice: Signal, source: ConsentSource): ConsentPurposes {
  return { source, measurement: choice, advertising: choice, ad_user_data: choice, ad_personalization: choice }
}

/** Which consent decided a conversion: its own, a matched visit's purposes, a visit's one-bit choice, or none. */
export type ConsentRule = 'conversion' | 'visit' | 'visit-choice' | 'none'

export interface AppliedConsent {
  rule: ConsentRule
  purposes?: ConsentPurposes
}

/** The conversion's own consent wins; else the newest matched visit's purposes; else its one-bit choice. */
export function applyConsent(own: ConsentPurposes | undefined, visit: ConsentPurposes | undefined, choice: 'granted' | 'denied' | 'unknown'): AppliedConsent {
  if (own) return { rule: 'conversion', purposes: own }
  if (visit) return { rule: 'visit', purposes: visit }
  if (choice !== 'unknown') return { rule: 'visit-choice', purposes: fromChoice(choice, 'banner') }
  return { rule: 'none' }
}

/**
 * Why no ad platform receives the conversion, or undefined when they may (each then judged on its own: vendor
 * consent, ad user data, ad personalization). Advertising needs both the advertising purpose and, under TCF,
 * device access (folded into `advertising` when the string is read).
 */
export function advertisingRefusal(applied: AppliedConsent): string | undefined {
  const p = applied.purposes
  if (!p || p.advertising !== 'denied') return undefined
  const where = applied.rule === 'conversion' ? REFUSAL_WORDS.conversion : REFUSAL_WORDS.visit
  return (p.measurement === 'granted' ? REFUSAL_WORDS.measurementOnly : REFUSAL_WORDS.denied).replace('%s', p.source).replace('%s', where)
}

/**
 * The words of a consent refusal, `%s` for the source and then for where the consent came from: shared with the
 * release of a held conversion (plugins/release), which writes them in SQL with `format()`.
 */
export const REFUSAL_WORDS = {
  measurementOnly: 'consent (%s, %s) allows measurement but not advertising',
  denied: 'the visitor denied consent (%s, %s)',
  conversion: 'the conversion\'s context.consent',
  visit: 'the matched visit',
} as const

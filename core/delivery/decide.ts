import type { UsPrivacyMode } from '../config/schema.ts'
import { advertisingRefusal, type AppliedConsent } from '../consent/purposes.ts'
import { normalizeCountry, normalizeState } from '../identity/normalize.ts'
import type { EventMapping } from './mapping.ts'
import type { VisitMatch } from './match.ts'
import type { Trust } from './trust.ts'
import type { ConversionInput, StandardEvent } from './types.ts'

/** What the pipeline knows about a new conversion once its event is mapped and the hook has run. */
export interface DeliveryFacts {
  mapping: EventMapping
  /** `conversion:before-deliver` listeners' verdict (the release plugin holds "when qualified" events). */
  hold: boolean
  match: Pick<VisitMatch, 'isBot' | 'consent'>
  /** The ad platforms the site delivers to. */
  platforms: readonly string[]
  trust: Trust
  /** The sender chose the messageId (dcgate did not make it up). */
  chosenId: boolean
  deliver: 'inline' | 'background'
  /** delivery.publicGraceSeconds */
  publicGraceSeconds: number
  /** Seconds the source asked the conversion to wait for a withdrawal (AcceptMeta.waitSeconds); 0 or unset: none. */
  waitSeconds?: number
  /** The person opted out under a US state law (usPrivacyOf); unset when they did not, or are outside the US. */
  usPrivacy?: UsPrivacyDecision
  /** The consent per purpose that applies (core/consent/purposes.ts `applyConsent`); unset: none known. */
  consent?: AppliedConsent
}

/** Where the conversion goes: its state, one outbox row per platform (or none), and when they are attempted. */
export interface DeliveryPlan {
  /** `unmapped` also for an unknown event: stored, delivered nowhere. */
  state: 'accepted' | 'unmapped' | 'held'
  standardEvent: StandardEvent | null
  /** One outbox row each; none for a conversion that is not meant for the platforms (unmapped, held). */
  providers: readonly string[]
  /** Why every outbox row is written `skipped` (a bot or a denied consent): recorded, never sent. */
  skipReason?: string
  /** Something will be sent (rows, none skipped). */
  sendable: boolean
  /** The first attempt is made before answering. */
  inline: boolean
  /** Seconds before the first attempt is due: a public conversion's grace, for a trusted copy to supersede it, or the source's wait. */
  graceSeconds: number
  /** IP and user agent are kept while a platform may still need them: for sending now, or for a release later. */
  keepsBrowser: boolean
  /** The US opt-out and the mode applied to it, stored with the conversion; unset when none applies. */
  usPrivacy?: UsPrivacyDecision
  /** The consent per purpose that decided, and by which rule; stored with the conversion for the adapters and the report. */
  consent: AppliedConsent
}

const NO_PLATFORMS: readonly string[] = []

/** The pure part of accepting a conversion: hold, gates and fan-out, without I/O. */
export function decideDelivery(facts: DeliveryFacts): DeliveryPlan {
  const { mapping, match } = facts
  const mapped = mapping.kind === 'mapped'
  const state = !mapped ? 'unmapped' : facts.hold ? 'held' : 'accepted'
  const consent: AppliedConsent = facts.consent ?? { rule: 'none' }
  // Purposes (the conversion's own, or a visit's) speak for themselves: measurement-only consent keeps the visit and
  // its page views, and no ad platform receives the conversion. A visit's one-bit choice keeps its plain message.
  const consentRefusal = consent.rule === 'conversion' || consent.rule === 'visit' ? advertisingRefusal(consent)
    : match.consent === 'denied' ? 'the visitor denied consent' : undefined
  // A gate is checked only for a conversion meant for the platforms; a held one is gated when it is released.
  const skipReason = state !== 'accepted' ? undefined
    : match.isBot ? 'the matched visit was ruled a bot'
      : consentRefusal ? consentRefusal
        : facts.usPrivacy?.mode === 'drop' ? usPrivacyDropReason(facts.usPrivacy)
          : undefined
  const providers = state === 'accepted' ? facts.platforms : NO_PLATFORMS
  // A public id the sender chose may be the page's copy of an order a signed webhook is about to report: it waits
  // a grace, during which a trusted copy supersedes it. Ids dcgate made cannot be another source's.
  const graceSeconds = Math.max(facts.trust === 'public' && facts.chosenId ? facts.publicGraceSeconds : 0, facts.waitSeconds ?? 0)
  const sendable = providers.length > 0 && !skipReason
  return {
    state,
    standardEvent: mapped ? mapping.standardEvent : null,
    providers,
    skipReason,
    sendable,
    inline: sendable && facts.deliver === 'inline' && graceSeconds === 0,
    graceSeconds,
    keepsBrowser: sendable || state === 'held',
    usPrivacy: facts.usPrivacy,
    consent,
  }
}

/**
 * What dcgate decided for a person who opted out of the sale or sharing of their data under a US state law, stored
 * with the conversion (`conversions.us_privacy`) and shown in the delivery report.
 */
export interface UsPrivacyDecision {
  /**
   * The site's `consent.usPrivacy` that applied: `off` sent as usual, `limited` sent with each platform's
   * limited-data-use signal, `drop` sent nowhere.
   */
  mode: UsPrivacyMode
  /**
   * Where the opt-out came from: `gpc`, Global Privacy Control (the browser on a matched visit, or the conversion's
   * `context.consent.gpc`); `opt_out`, the conversion's `context.consent.usPrivacyOptOut`.
   */
  signal: UsOptOutSignal
  /** `us` when the person's country is known (it is then the US); unset: unknown, the platform locates the person. */
  country?: 'us'
  /** The US state's two-letter code, lower case, when the conversion gave it. */
  state?: string
}

export type UsOptOutSignal = 'gpc' | 'opt_out'

/** What a conversion itself says about a US opt-out: the automation body's `context.consent` (core/intake). */
export interface UsPrivacyInput {
  usOptOut?: UsOptOutSignal
}

const US_STATE_CODE = /^[a-z]{2}$/

/**
 * Whether a US state's opt-out applies to this conversion, and how the site treats it. An opt-out comes from the
 * conversion itself, else from any matched visit whose browser sent Global Privacy Control (a later visit without
 * the signal does not take it back). It applies to a person in the US, and to one whose country nobody knows; the
 * country is the conversion's own (traits), else the newest matched visit's (from its IP address). Elsewhere it
 * changes nothing: EU consent has its own rules (`consent.banner` and the consent gate).
 */
export function usPrivacyOf(mode: UsPrivacyMode, input: Pick<ConversionInput, 'traits'> & UsPrivacyInput, match: Pick<VisitMatch, 'gpc' | 'country'>): UsPrivacyDecision | undefined {
  const signal = input.usOptOut ?? (match.gpc ? 'gpc' : undefined)
  if (!signal) return undefined
  const country = normalizeCountry(input.traits?.country) ?? match.country?.toLowerCase()
  if (country !== undefined && country !== 'us') return undefined
  if (country === undefined) return { mode, signal }
  // The state only from the conversion: the bundled IP data is country level.
  const state = normalizeState(input.traits?.state)
  return { mode, signal, country, ...(state && US_STATE_CODE.test(state) ? { state } : {}) }
}

/** The `error` of every delivery a `drop` site skips, and the answer's `not sent: …`. */
export function usPrivacyDropReason(decision: UsPrivacyDecision): string {
  const how = decision.signal === 'gpc' ? 'with Global Privacy Control' : 'in context.consent'
  return `the person opted out of the sale or sharing of their data (US state privacy law) ${how}; consent.usPrivacy is drop`
}

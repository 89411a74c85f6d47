import type { EventMapping } from './mapping.ts'
import type { VisitMatch } from './match.ts'
import type { Trust } from './trust.ts'
import type { StandardEvent } from './types.ts'

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
  /** Seconds before the first attempt is due: a public conversion's grace, for a trusted copy to supersede it. */
  graceSeconds: number
  /** IP and user agent are kept while a platform may still need them: for sending now, or for a release later. */
  keepsBrowser: boolean
}

const NO_PLATFORMS: readonly string[] = []

/** The pure part of accepting a conversion: hold, gates and fan-out, without I/O. */
export function decideDelivery(facts: DeliveryFacts): DeliveryPlan {
  const { mapping, match } = facts
  const mapped = mapping.kind === 'mapped'
  const state = !mapped ? 'unmapped' : facts.hold ? 'held' : 'accepted'
  // A gate is checked only for a conversion meant for the platforms; a held one is gated when it is released.
  const skipReason = state !== 'accepted' ? undefined
    : match.isBot ? 'the matched visit was ruled a bot'
      : match.consent === 'denied' ? 'the visitor denied consent'
        : undefined
  const providers = state === 'accepted' ? facts.platforms : NO_PLATFORMS
  // A public id the sender chose may be the page's copy of an order a signed webhook is about to report: it waits
  // a grace, during which a trusted copy supersedes it. Ids dcgate made cannot be another source's.
  const graceSeconds = facts.trust === 'public' && facts.chosenId ? facts.publicGraceSeconds : 0
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
  }
}

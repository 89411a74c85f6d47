import { randomUUID } from 'node:crypto'
import type { ConsolaInstance } from 'consola'
import { callHookSafe, reportError, type DcgateHookable, type DeliveryDecision } from '../hooks.ts'
import { hashIdentity } from '../identity/hash.ts'
import { toClearTraits } from '../identity/clear-traits.ts'
import type { Registry } from '../registry.ts'
import type { ActiveSite } from '../sites/directory.ts'
import { applyConsent } from '../consent/purposes.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { listenForRefunds } from './adjust.ts'
import { answerAsNew, DUPLICATE, summarise, type AcceptResult, type AttemptResult } from './answer.ts'
import { decideDelivery, usPrivacyOf, type UsPrivacyInput } from './decide.ts'
import { resolveEvent } from './mapping.ts'
import { CLICK_ID_NAMES, givenClickIds, toVisitMatch } from './match.ts'
import type { Outbox } from './outbox.ts'
import { createBatcher } from './batcher.ts'
import type { ClaimedDelivery } from './queries/outbox.ts'
import { insertTogether, lookUpIntake, supersedePublic, type InsertedConversion, type InsertResult, type IntakeLookup, type LookupKey, type NewConversion } from './queries/intake.ts'
import { siteUrlOf, toConversionRow, toDeliveryRow, toEvent } from './rows.ts'
import type { ClickIds, Confirmation, ConversionEvent, ConversionInput } from './types.ts'
import { isRepeat, supersededReason, type Trust } from './trust.ts'

/** A conversion as an intake route received it, before matching and hashing. */
export type { ConversionInput } from './types.ts'
export type { AcceptResult } from './answer.ts'
export { DUPLICATE } from './answer.ts'

export interface PipelineDeps { prepared: RunPrepared, registry: Registry, outbox: Outbox, hooks: DcgateHookable, logger: ConsolaInstance }

export interface AcceptMeta {
  /** The intake route or webhook source it came through (automation, shopify, …). */
  source: string
  confirmation: Confirmation
  /**
   * `trusted` for the private-key route and a webhook whose signature was verified; `public` for the tracking script
   * and an unsigned webhook. A messageId is unique per site and tier; a trusted conversion supersedes a public one
   * with its id (core/delivery/trust.ts).
   */
  trust: Trust
  /** The webhook's own event type (orders/paid, checkout.session.completed); the route name otherwise. */
  sourceEventType?: string
  /**
   * `inline` (default) makes the first attempt before answering, so the response reports each platform.
   * `background` only stores the conversion and its outbox rows: the worker delivers, and a webhook is answered fast.
   */
  deliver?: 'inline' | 'background'
  /** Seconds its deliveries wait before they are due, for a later webhook to withdraw it (core/delivery/queries/waits.ts). */
  waitSeconds?: number
}

export interface ConversionPipeline {
  accept: (site: ActiveSite, input: ConversionInput, meta: AcceptMeta) => Promise<AcceptResult>
}

/** lookup → repeat? → match → map → hold? (hook) → decide → store (conversion + outbox rows) → first attempt → answer. */
export function createConversionPipeline(deps: PipelineDeps): ConversionPipeline {
  const { prepared, registry, outbox, hooks, logger } = deps
  const platformsOf = (siteId: string) => registry.forSite(siteId, 'ad-platform').map((c) => c.definition.name)
  // The clear fields the platforms a conversion goes to declare; nothing else of them is kept in clear.
  const clearWanted = (siteId: string, providers: readonly string[]) => new Set(registry.forSite(siteId, 'ad-platform')
    .filter((c) => providers.includes(c.definition.name)).flatMap((c) => c.definition.clearTraits ?? []))
  // Concurrent conversions share the lookup's round trip: under load one statement answers several.
  const lookups = createBatcher<LookupKey, IntakeLookup>({ maxInFlight: INTAKE_STATEMENTS_IN_FLIGHT, maxBatch: () => LOOKUPS_PER_STATEMENT, run: (_key, keys) => lookUpIntake(prepared, keys) })
  // And the insert's: one statement and one commit (one WAL flush) for the conversions that arrive together.
  const inserts = createBatcher<NewConversion, InsertResult>({ maxInFlight: INTAKE_STATEMENTS_IN_FLIGHT, maxBatch: () => INSERTS_PER_STATEMENT, run: (_key, items) => insertTogether(prepared, items) })
  // A refund counted against stored conversions is told to the platforms that received them (adjust.ts).
  listenForRefunds(hooks, { prepared, registry, onError: (error) => void reportError(hooks, logger, error, { source: 'delivery' }) })
  return {
    async accept(site, input, meta) {
      const messageId = input.messageId ?? randomUUID()
      const ids = input.identifiers ?? {}
      const identity = hashIdentity({ ...input.traits, external_id: input.userId ?? ids.customer_id ?? input.traits?.external_id }, { defaultCountry: site.config.defaultCountry })
      const { holders, visits, newest } = await lookups.add('', { siteId: site.id, messageId, sessionId: ids.dc_session_id, emailHash: identity.email })
      // A trusted repeat is answered before any hook runs; the insert below stays the guarantee for concurrent repeats.
      // A public one goes on to the answer a new conversion would get, and is not stored (answerAsNew).
      const repeat = isRepeat(meta.trust, holders)
      if (repeat && meta.trust === 'trusted') return { messageId, success: true, message: DUPLICATE, identity: { matched: 0, created: 0, enriched: [] } }

      const match = toVisitMatch(visits, newest)
      const given = givenClickIds(ids)
      const clickIds: ClickIds = { ...match.clickIds, ...given }
      const identityReport = { matched: match.matched, created: 0, enriched: CLICK_ID_NAMES.filter((name) => match.clickIds[name] && !given[name]) }

      const mapping = resolveEvent(site.config, input.event)
      let hold = false
      if (mapping.kind === 'mapped') {
        // Nothing is held unless a listener says so (the release plugin holds "when qualified" events).
        const decision: DeliveryDecision = { siteId: site.id, messageId, event: input.event, standardEvent: mapping.standardEvent, release: mapping.release, hold }
        await callHookSafe(hooks, logger, 'conversion:before-deliver', decision)
        hold = decision.hold
      }
      // The conversion's own consent, else the newest matched visit's; a GPP opt-out counts as a US opt-out.
      const consent = applyConsent(input.consent, match.purposes, match.consent)
      const usOptOut = (input as UsPrivacyInput).usOptOut ?? (consent.purposes?.us_opt_out ? 'opt_out' : undefined)
      const plan = decideDelivery({
        mapping, hold, match, platforms: platformsOf(site.id), trust: meta.trust, deliver: meta.deliver ?? 'inline',
        chosenId: input.messageId !== undefined && input.messageIdGenerated !== true, publicGraceSeconds: outbox.publicGraceSeconds, waitSeconds: meta.waitSeconds,
        usPrivacy: usPrivacyOf(site.config.consent.usPrivacy, { traits: input.traits, usOptOut }, match), consent,
      })

      const clearTraits = toClearTraits(input.traits, clearWanted(site.id, plan.providers))
      if (repeat) return answerAsNew(plan, mapping, input.event, messageId, identityReport)
      const conversion = toConversionRow(input, meta, plan, { siteId: site.id, messageId, identity, clickIds, match, siteUrl: siteUrlOf(site), clearTraits })
      // A platform whose request budget is used up for this second is sent with its next batch, after the answer.
      const how = new Map(plan.inline ? plan.providers.map((provider) => [provider, outbox.plan(site.id, provider)] as const) : [])
      const inline = plan.providers.map((provider) => plan.inline && how.get(provider)?.kind !== 'worker')
      const stored = await inserts.add('', { conversion, delivery: toDeliveryRow(plan, outbox.leaseSeconds), providers: plan.providers, inline })
      if (stored && 'refused' in stored) throw stored.refused
      if (!stored) return meta.trust === 'public' ? answerAsNew(plan, mapping, input.event, messageId, identityReport) : { messageId, success: true, message: DUPLICATE, identity: identityReport }
      if (meta.trust === 'trusted' && holders.includes('public')) {
        // The public copy's deliveries not attempted yet end skipped. Should this fail, the worker's check before it
        // sends a public conversion skips them anyway.
        await supersedePublic(prepared, site.id, messageId, supersededReason(meta.source))
          .catch((error: unknown) => reportError(hooks, logger, error, { source: 'delivery' }))
      }
      const attempts = plan.inline ? await attemptNow(outbox, stored, site.id, how, toEvent(conversion)) : NO_ATTEMPTS
      return { messageId, ...summarise(plan, mapping, input.event, attempts), identity: identityReport }
    },
  }
}

const NO_ATTEMPTS: readonly AttemptResult[] = []
/** Lookup (and insert) statements running at once; what arrives meanwhile goes in the next one. */
const INTAKE_STATEMENTS_IN_FLIGHT = 4
/** Conversions one lookup statement answers at most. */
const LOOKUPS_PER_STATEMENT = 50
/** Conversions one insert statement stores at most. */
const INSERTS_PER_STATEMENT = 50

/**
 * The inline attempt of the deliveries the insert claimed (it counted that attempt already: attempts = 1), which the
 * conversion holds until the attempt's record writes their rows. Those whose
 * platform's request budget is used up are answered queued: claimed ones are sent after the answer with the next
 * batch, the others by the worker.
 */
async function attemptNow(
  outbox: Outbox, stored: InsertedConversion, siteId: string, how: ReadonlyMap<string, ReturnType<Outbox['plan']>>, event: ConversionEvent,
): Promise<AttemptResult[]> {
  const now: ClaimedDelivery[] = []
  const later: ClaimedDelivery[] = []
  const queued: AttemptResult[] = []
  for (const d of stored.deliveries) {
    const plan = how.get(d.provider)
    const claimed = { id: d.id, conversion_id: stored.conversionId, site_id: siteId, provider: d.provider, attempts: 1, held: d.held }
    if (!plan || plan.kind === 'now') {
      now.push(claimed)
      continue
    }
    // A worker's row was not claimed by the insert: only the answer mentions it.
    if (plan.kind === 'later') later.push(claimed)
    queued.push({ id: d.id, provider: d.provider, status: 'pending', error: plan.reason, queued: true })
  }
  if (later.length > 0) void outbox.attempt(later, event, 'later')
  const attempted = await outbox.attempt(now, event)
  return queued.length > 0 ? [...attempted, ...queued] : attempted
}

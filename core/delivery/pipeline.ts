import { randomUUID } from 'node:crypto'
import type { ConsolaInstance } from 'consola'
import { callHookSafe, reportError, type DcgateHookable } from '../hooks.ts'
import { hashIdentity } from '../identity/hash.ts'
import { normalizeCountry, normalizeEmail } from '../identity/normalize.ts'
import type { Registry } from '../registry.ts'
import type { ActiveSite } from '../sites/directory.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { lookUpIntake, CLICK_ID_NAMES } from './match.ts'
import { INSERT_CONVERSION, SUPERSEDE_PUBLIC } from './statements.ts'
import { resolveEvent } from './mapping.ts'
import type { AttemptResult, ClaimedDelivery, Outbox } from './outbox.ts'
import type { ClickIds, Confirmation, ConversionInput, StandardEvent } from './types.ts'
import { isRepeat, platformEventId, supersededReason, type Trust } from './trust.ts'

/** A conversion as an intake route received it, before matching and hashing. */
export type { ConversionInput } from './types.ts'

export interface AcceptResult {
  messageId: string
  success: boolean
  message: string
  identity: { matched: number, created: number, enriched: string[] }
  errors?: { provider?: string, status: string, message: string }[]
}

/** What `conversion:before-deliver` listeners see and may change: set `hold` to keep it from the platforms. */
export interface DeliveryDecision {
  siteId: string
  messageId: string
  event: string
  standardEvent: StandardEvent
  release: 'immediately' | 'when_qualified'
  hold: boolean
  reason?: string
}

export const DUPLICATE = 'duplicate_delivery_skipped'

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
}

export interface ConversionPipeline {
  accept: (site: ActiveSite, input: ConversionInput, meta: AcceptMeta) => Promise<AcceptResult>
}

/** received → dedupe → match → map → hold? → gates → outbox rows → first attempt → result. */
export function createConversionPipeline(deps: PipelineDeps): ConversionPipeline {
  const { prepared, registry, outbox, hooks, logger } = deps
  return {
    async accept(site, input, meta) {
      const messageId = input.messageId ?? randomUUID()
      // A public id the sender chose may be the page's copy of an order a signed webhook is about to report: it
      // waits a grace, during which a trusted copy supersedes it. Ids dcgate made cannot be another source's.
      const chosenId = input.messageId !== undefined && input.messageIdGenerated !== true
      const graceSeconds = meta.trust === 'public' && chosenId ? outbox.publicGraceSeconds : 0
      const ids = input.identifiers ?? {}
      const identity = hashIdentity({ ...input.traits, external_id: input.userId ?? ids.customer_id ?? input.traits?.external_id })
      const { holders, match } = await lookUpIntake(prepared, site.id, messageId, { sessionId: ids.dc_session_id, emailHash: identity.email })
      // A repeat is answered before any hook runs; the insert below stays the guarantee for concurrent repeats.
      if (isRepeat(meta.trust, holders)) return { messageId, success: true, message: DUPLICATE, identity: { matched: 0, created: 0, enriched: [] } }
      const given = givenClickIds(ids)
      const clickIds: ClickIds = { ...match.clickIds, ...given }
      const enriched = CLICK_ID_NAMES.filter((name) => match.clickIds[name] && !given[name])
      const identityReport = { matched: match.matched, created: 0, enriched }

      const mapping = resolveEvent(site.config, input.event)
      let state = mapping.kind === 'mapped' ? 'accepted' : 'unmapped'
      let skipReason: string | undefined
      if (mapping.kind === 'mapped') {
        // "When qualified" events are held (state `held`, nothing delivered) until a release; listeners may decide otherwise.
        const decision: DeliveryDecision = { siteId: site.id, messageId, event: input.event, standardEvent: mapping.standardEvent, release: mapping.release, hold: mapping.release === 'when_qualified' }
        await callHookSafe(hooks, logger, 'conversion:before-deliver', decision)
        if (decision.hold) state = 'held'
        else if (match.isBot) skipReason = 'the matched visit was ruled a bot'
        else if (match.consent === 'denied') skipReason = 'the visitor denied consent'
      }
      const destinations = state === 'accepted' ? registry.forSite(site.id, 'ad-platform') : []

      const occurredAt = input.occurredAt ?? new Date()
      const standardEvent = mapping.kind === 'mapped' ? mapping.standardEvent : null
      const sendable = destinations.length > 0 && !skipReason
      const inline = sendable && meta.deliver !== 'background' && graceSeconds === 0
      const keepsBrowser = sendable || state === 'held'
      const content = contentOf(input)
      const rows = await prepared<{ conversion_id: string, id: string | null, provider: string | null }>(INSERT_CONVERSION, [
        site.id, messageId, meta.source, input.event, standardEvent, occurredAt, input.value ?? null, input.currency ?? null,
        input.orderId ?? null, input.channel ?? 'online', JSON.stringify(input.items ?? []), JSON.stringify(identity), JSON.stringify(clickIds),
        input.userId ?? ids.customer_id ?? null, input.anonymousId ?? null, ids.dc_session_id ?? null, input.pageUrl ?? null,
        // IP and browser are kept while a platform may still need them: for sending now, or for a release later.
        keepsBrowser ? input.ip ?? null : null, keepsBrowser ? input.userAgent ?? null : null, match.consent, match.isBot, meta.confirmation, state,
        meta.sourceEventType ?? meta.source, countryOf(input), content.name, content.category,
        skipReason ? 'skipped' : 'pending', skipReason ?? null, inline, outbox.leaseSeconds, destinations.map((d) => d.definition.name),
        state === 'held' ? normalizeEmail(input.traits?.email) ?? null : null, meta.trust, graceSeconds,
      ])
      if (rows.length === 0) return { messageId, success: true, message: DUPLICATE, identity: identityReport }

      if (meta.trust === 'trusted' && holders.includes('public')) {
        // The public copy's deliveries not attempted yet end skipped. Should this fail, the worker's check before it
        // sends a public conversion skips them anyway.
        await prepared(SUPERSEDE_PUBLIC, [site.id, messageId, supersededReason(meta.source)])
          .catch((error: unknown) => reportError(hooks, logger, error, { source: 'delivery' }))
      }
      const conversionId = rows[0]!.conversion_id
      // The insert counted the inline attempt already (attempts = 1), so one cut short by a crash is reported.
      const claimed: ClaimedDelivery[] = inline
        ? rows.filter((r) => r.id).map((r) => ({ id: r.id!, conversion_id: conversionId, site_id: site.id, provider: r.provider!, attempts: 1 }))
        : []
      const results = await outbox.attempt(claimed, inline ? {
        messageId: platformEventId(messageId, meta.trust), siteId: site.id, event: input.event, standardEvent: standardEvent!, occurredAt, value: input.value, currency: input.currency,
        orderId: input.orderId, items: input.items ?? [], channel: input.channel ?? 'online', identity, clickIds, ip: input.ip,
        userAgent: input.userAgent, pageUrl: input.pageUrl, consent: { adUserData: match.consent, adPersonalization: match.consent }, confirmation: meta.confirmation,
      } : undefined)
      const outcome = sendable && !inline
        ? { success: true, message: 'stored; delivering in the background' }
        : summarise(results, { state, mapping: mapping.kind, event: input.event, skipReason, destinations: destinations.length })
      return { messageId, ...outcome, identity: identityReport }
    },
  }
}

function countryOf(input: ConversionInput): string | null {
  return normalizeCountry(input.traits?.country)?.toUpperCase() ?? null
}

function contentOf(input: ConversionInput): { name: string | null, category: string | null } {
  const first = input.items?.[0]
  return { name: input.contentName ?? first?.name ?? null, category: input.contentCategory ?? first?.category ?? null }
}

function givenClickIds(ids: Record<string, string | undefined>): ClickIds {
  const clickIds: ClickIds = {}
  for (const name of CLICK_ID_NAMES) if (ids[name]) clickIds[name] = ids[name]
  // A raw fbclid becomes Meta's fbc cookie value, as the pixel would have stored it.
  if (!clickIds.fbc && ids.fbclid) clickIds.fbc = `fb.1.${Date.now()}.${ids.fbclid}`
  return clickIds
}

function summarise(
  rows: readonly AttemptResult[],
  ctx: { state: string, mapping: string, event: string, skipReason?: string, destinations: number },
): Pick<AcceptResult, 'success' | 'message' | 'errors'> {
  if (ctx.mapping === 'unknown') {
    return { success: false, message: 'not delivered: unknown event', errors: [{ status: 'unknown_event', message: `"${ctx.event}" is neither a standard event (Purchase, Lead, CompleteRegistration, Schedule) nor one of the site's active events` }] }
  }
  if (ctx.mapping === 'unmapped') return { success: true, message: `stored; "${ctx.event}" sends as no standard event, so no platform receives it` }
  if (ctx.state === 'held') return { success: true, message: 'held until qualified' }
  if (ctx.destinations === 0) return { success: true, message: 'stored; no ad platform is connected' }
  if (ctx.skipReason) return { success: true, message: `not sent: ${ctx.skipReason}` }
  const sent = rows.filter((r) => r.status === 'sent').length
  const errors = rows.filter((r) => r.status !== 'sent').map((r) => ({ provider: r.provider, status: r.status, message: r.error ?? r.status }))
  const message = sent === rows.length ? `sent to ${sent} platform${sent === 1 ? '' : 's'}` : `sent to ${sent} of ${rows.length} platforms`
  return errors.length ? { success: sent > 0, message, errors } : { success: true, message }
}

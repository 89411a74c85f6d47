import { randomUUID } from 'node:crypto'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { ConsolaInstance } from 'consola'
import { callHookSafe, type DcgateHookable } from '../hooks.ts'
import { hashIdentity, type IdentityTraits } from '../identity/hash.ts'
import type { AdPlatformDefinition, Registry } from '../registry.ts'
import type { ActiveSite } from '../sites/directory.ts'
import { matchVisits, CLICK_ID_NAMES } from './match.ts'
import { resolveEvent } from './mapping.ts'
import type { ClaimedDelivery, Outbox } from './outbox.ts'
import type { Channel, ClickIds, Confirmation, ConversionItem, StandardEvent } from './types.ts'

/** A conversion as an intake route received it, before matching and hashing. */
export interface ConversionInput {
  messageId?: string
  event: string
  occurredAt?: Date
  userId?: string
  anonymousId?: string
  value?: number
  currency?: string
  orderId?: string
  items?: ConversionItem[]
  channel?: Channel
  /** Plain text; hashed here, never stored in clear. */
  traits?: IdentityTraits
  /** Click ids, customer_id and dc_session_id. */
  identifiers?: Record<string, string | undefined>
  ip?: string
  userAgent?: string
  pageUrl?: string
}

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

export interface PipelineDeps { orm: MikroORM, registry: Registry, outbox: Outbox, hooks: DcgateHookable, logger: ConsolaInstance }

export interface ConversionPipeline {
  accept: (site: ActiveSite, input: ConversionInput, meta: { source: string, confirmation: Confirmation }) => Promise<AcceptResult>
}

/** received → dedupe → match → map → hold? → gates → outbox rows → first attempt → result. */
export function createConversionPipeline(deps: PipelineDeps): ConversionPipeline {
  const { orm, registry, outbox, hooks, logger } = deps
  return {
    async accept(site, input, meta) {
      const messageId = input.messageId ?? randomUUID()
      const ids = input.identifiers ?? {}
      const identity = hashIdentity({ ...input.traits, external_id: input.userId ?? ids.customer_id ?? input.traits?.external_id })
      const match = await matchVisits(orm, site.id, { sessionId: ids.dc_session_id, emailHash: identity.email })
      const given = givenClickIds(ids)
      const clickIds: ClickIds = { ...match.clickIds, ...given }
      const enriched = CLICK_ID_NAMES.filter((name) => match.clickIds[name] && !given[name])
      const identityReport = { matched: match.matched, created: 0, enriched }

      const mapping = resolveEvent(site.config, input.event)
      let state = mapping.kind === 'mapped' ? 'accepted' : 'unmapped'
      let skipReason: string | undefined
      if (mapping.kind === 'mapped') {
        const decision: DeliveryDecision = { siteId: site.id, messageId, event: input.event, standardEvent: mapping.standardEvent, release: mapping.release, hold: false }
        await callHookSafe(hooks, logger, 'conversion:before-deliver', decision)
        if (decision.hold) state = 'held'
        else if (match.isBot) skipReason = 'the matched visit was ruled a bot'
        else if (match.consent === 'denied') skipReason = 'the visitor denied consent'
      }
      const destinations = state === 'accepted' ? registry.forSite(site.id, 'ad-platform') : []

      const claimed = await orm.em.fork().transactional(async (em) => {
        const connection = em.getConnection()
        const ctx = em.getTransactionContext()
        const inserted = await connection.execute<{ id: string }[]>(
          `insert into conversions (id, site_id, message_id, source, event, standard_event, occurred_at, value, currency, order_id, channel,
             items, identity, click_ids, user_id, anonymous_id, session_id, page_url, ip, user_agent, consent, is_bot, confirmation, state)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           on conflict (site_id, message_id) do nothing returning id`,
          [randomUUID(), site.id, messageId, meta.source, input.event, mapping.kind === 'mapped' ? mapping.standardEvent : null,
            input.occurredAt ?? new Date(), input.value ?? null, input.currency ?? null, input.orderId ?? null, input.channel ?? 'online',
            JSON.stringify(input.items ?? []), JSON.stringify(identity), JSON.stringify(clickIds), input.userId ?? null, input.anonymousId ?? null,
            ids.dc_session_id ?? null, input.pageUrl ?? null, destinations.length ? input.ip ?? null : null, destinations.length ? input.userAgent ?? null : null,
            match.consent, match.isBot, meta.confirmation, state],
          'all', ctx,
        )
        const conversionId = inserted[0]?.id
        if (!conversionId) return null
        const rows: ClaimedDelivery[] = []
        for (const { definition } of destinations) {
          const id = randomUUID()
          await connection.execute(
            `insert into deliveries (id, conversion_id, site_id, provider, status, error, locked_until)
             values (?, ?, ?, ?, ?, ?, case when ? then null else now() + make_interval(secs => ?) end)`,
            [id, conversionId, site.id, definition.name, skipReason ? 'skipped' : 'pending', skipReason ?? null, Boolean(skipReason), outbox.leaseSeconds], 'run', ctx,
          )
          if (!skipReason) rows.push({ id, conversion_id: conversionId, site_id: site.id, provider: definition.name, attempts: 0 })
        }
        return { conversionId, rows }
      })
      if (!claimed) return { messageId, success: true, message: DUPLICATE, identity: identityReport }

      await outbox.attempt(claimed.rows)
      return { messageId, ...await summarise(orm, claimed.conversionId, { state, mapping: mapping.kind, event: input.event, skipReason, destinations: destinations.map((d) => d.definition) }), identity: identityReport }
    },
  }
}

function givenClickIds(ids: Record<string, string | undefined>): ClickIds {
  const clickIds: ClickIds = {}
  for (const name of CLICK_ID_NAMES) if (ids[name]) clickIds[name] = ids[name]
  // A raw fbclid becomes Meta's fbc cookie value, as the pixel would have stored it.
  if (!clickIds.fbc && ids.fbclid) clickIds.fbc = `fb.1.${Date.now()}.${ids.fbclid}`
  return clickIds
}

async function summarise(
  orm: MikroORM, conversionId: string,
  ctx: { state: string, mapping: string, event: string, skipReason?: string, destinations: AdPlatformDefinition<any>[] },
): Promise<Pick<AcceptResult, 'success' | 'message' | 'errors'>> {
  if (ctx.mapping === 'unknown') {
    return { success: false, message: 'not delivered: unknown event', errors: [{ status: 'unknown_event', message: `"${ctx.event}" is neither a standard event nor one of the site's events (GET /api/v1/export/events lists them)` }] }
  }
  if (ctx.mapping === 'unmapped') return { success: true, message: `stored; "${ctx.event}" sends as no standard event, so no platform receives it` }
  if (ctx.state === 'held') return { success: true, message: 'held until qualified' }
  if (ctx.destinations.length === 0) return { success: true, message: 'stored; no ad platform is connected' }
  if (ctx.skipReason) return { success: true, message: `not sent: ${ctx.skipReason}` }
  const rows = await orm.em.getConnection().execute<{ provider: string, status: string, error: string | null }[]>(
    'select provider, status, error from deliveries where conversion_id = ? order by provider', [conversionId],
  )
  const sent = rows.filter((r) => r.status === 'sent').length
  const errors = rows.filter((r) => r.status !== 'sent').map((r) => ({ provider: r.provider, status: r.status, message: r.error ?? r.status }))
  const message = sent === rows.length ? `sent to ${sent} platform${sent === 1 ? '' : 's'}` : `sent to ${sent} of ${rows.length} platforms`
  return errors.length ? { success: sent > 0, message, errors } : { success: true, message }
}

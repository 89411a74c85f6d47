import type { MikroORM } from '@mikro-orm/postgresql'
import type { Storage } from 'unstorage'
import type { Registry, AdPlatformDefinition } from '../registry.ts'
import type { ResolvedConfig } from '../config/schema.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { dispatch } from './dispatch.ts'
import { RECORD_ATTEMPT } from './statements.ts'
import { nextStep } from './retry.ts'
import type { ConsentState, ConversionEvent, DeliveryOutcome, StandardEvent } from './types.ts'
import { platformEventId, supersededReason, type Trust } from './trust.ts'

/** A delivery held for an attempt. `attempts` already counts this one: the claim (or the inline insert) counted it. */
export interface ClaimedDelivery { id: string, conversion_id: string, site_id: string, provider: string, attempts: number }

export interface OutboxDeps {
  orm: MikroORM
  prepared: RunPrepared
  registry: Registry
  storage: Storage
  policy: ResolvedConfig['delivery']
  onError: (error: unknown) => void
}

export interface Outbox {
  /** Seconds a claim lasts (config delivery.leaseSeconds); a crashed holder's rows are free after it. */
  leaseSeconds: number
  /** Seconds a public conversion with a sender-chosen messageId waits before its first attempt (delivery.publicGraceSeconds). */
  publicGraceSeconds: number
  /** Claims up to `limit` due deliveries (any instance, never twice at once) and attempts them. */
  runDue: (limit: number) => Promise<number>
  /**
   * Attempts deliveries this process holds the lease on. `event` is the conversion as the caller already
   * has it (intake), which saves reading it back.
   */
  attempt: (rows: readonly ClaimedDelivery[], event?: ConversionEvent) => Promise<AttemptResult[]>
}

/** A delivery row's state after an attempt, as written back. */
interface RowUpdate {
  id: string, conversion_id: string, provider: string, status: string, attempts: number, http_status: number | null
  error: string | null, duration_ms: number | null, next_attempt_at: string | null, sent_at: string | null
}

/** Where one delivery stands after an attempt. */
export interface AttemptResult { id: string, provider: string, status: string, error: string | null }

export function createOutbox(deps: OutboxDeps): Outbox {
  const { orm, registry, storage, policy } = deps
  const sql = <T extends object[] = Record<string, unknown>[]>(text: string, params: unknown[] = []) => orm.em.getConnection().execute<T>(text, params)
  const cache = {
    get: (key: string) => storage.getItem<string>(`cache:auth:${key}`),
    set: (key: string, value: string, ttlSeconds: number) => storage.setItem(`cache:auth:${key}`, value, { ttl: ttlSeconds }),
  }

  /** Calls the platform and decides the row's next state; `record` writes it. */
  const attemptOne = async (row: ClaimedDelivery, given?: ConversionEvent): Promise<RowUpdate> => {
    const configured = registry.forSite(row.site_id, 'ad-platform').find((c) => c.definition.name === row.provider)
    const stored = given ? undefined : (await sql<ConversionRow[]>(READ_CONVERSION, [row.conversion_id]))[0]
    const event = given ?? (stored ? toEvent(stored) : undefined)
    // A skip is no attempt: the count the claim added is taken back.
    const skipped = (error: string): RowUpdate => ({
      id: row.id, conversion_id: row.conversion_id, provider: row.provider, status: 'skipped', attempts: Math.max(0, row.attempts - 1), http_status: null, error, duration_ms: null, next_attempt_at: null, sent_at: null,
    })
    if (stored?.superseded_by) return skipped(supersededReason(stored.superseded_by))
    let outcome: DeliveryOutcome
    let httpStatus: number | null = null
    let durationMs: number | null = null
    let platform: AdPlatformDefinition<unknown> | undefined
    if (!configured || !event) {
      outcome = { status: 'rejected', message: configured ? 'conversion not found' : `platform ${row.provider} is no longer configured for site ${row.site_id}` }
    }
    else {
      platform = configured.definition as AdPlatformDefinition<unknown>
      let skip: string | undefined
      try {
        skip = platform.skipReason?.(event, configured.options)
      }
      catch (error) {
        // An adapter bug: the delivery ends failed, so it can be replayed once the adapter is fixed.
        const message = `adapter ${platform.name} could not check the event: ${error instanceof Error ? error.message : String(error)}`
        return { id: row.id, conversion_id: row.conversion_id, provider: row.provider, status: 'failed', attempts: row.attempts, http_status: null, error: message, duration_ms: null, next_attempt_at: null, sent_at: null }
      }
      // Past the platform's event-age window (a conversion released late, a long outage): recorded, not sent to be refused.
      skip ??= tooOld(event.occurredAt, platform.maxEventAgeDays, platform.name)
      if (skip) return skipped(skip)
      const result = await dispatch(platform, configured.options, [event], { cache, timeoutMs: policy.requestTimeoutMs })
      outcome = result.outcomes[0]!
      httpStatus = result.httpStatus
      durationMs = result.durationMs
    }
    const attempts = row.attempts
    const step = nextStep(outcome, attempts, event?.occurredAt ?? new Date(), platform?.maxEventAgeDays ?? 1, policy)
    return {
      id: row.id, conversion_id: row.conversion_id, provider: row.provider, status: step.status, attempts, http_status: httpStatus,
      error: step.status === 'sent' ? null : step.error, duration_ms: durationMs,
      next_attempt_at: step.status === 'retrying' ? step.nextAttemptAt.toISOString() : null, sent_at: step.status === 'sent' ? new Date().toISOString() : null,
    }
  }

  const record = (updates: readonly RowUpdate[]) => deps.prepared(RECORD_ATTEMPT, [
    JSON.stringify(updates), updates.map((u) => u.id), [...new Set(updates.map((u) => u.conversion_id))],
  ])

  const attempt = async (rows: readonly ClaimedDelivery[], event?: ConversionEvent): Promise<AttemptResult[]> => {
    const settled = await Promise.all(rows.map((row) => attemptOne(row, event).catch((error: unknown) => {
      deps.onError(error)
      return undefined
    })))
    const updates = settled.filter((u): u is RowUpdate => u !== undefined)
    if (updates.length) await record(updates).catch(deps.onError)
    // A row without an update keeps its lease; when it runs out the worker tries again, so nothing is lost.
    return rows.map((row) => {
      const update = updates.find((u) => u.id === row.id)
      return update ? { id: row.id, provider: row.provider, status: update.status, error: update.error } : { id: row.id, provider: row.provider, status: 'pending', error: 'attempt interrupted; the worker retries it' }
    })
  }

  return {
    leaseSeconds: policy.leaseSeconds,
    publicGraceSeconds: policy.publicGraceSeconds,
    attempt,
    async runDue(limit) {
      // The claim counts the attempt: one cut short by a crash (kill -9 before its outcome was recorded) shows in the report.
      const rows = await sql<ClaimedDelivery[]>(
        `update deliveries set locked_until = now() + make_interval(secs => ?), attempts = attempts + 1, updated_at = now()
         where id in (select id from deliveries where status in ('pending', 'retrying') and next_attempt_at <= now()
           and (locked_until is null or locked_until < now()) order by next_attempt_at limit ? for update skip locked)
         returning id, conversion_id, site_id, provider, attempts`,
        [policy.leaseSeconds, limit],
      )
      await attempt(rows)
      return rows.length
    },
  }
}

/**
 * The stored conversion, and for a public one the source of a trusted conversion that took its messageId meanwhile
 * (it arrived at the same moment as the intake's lookup, or the public one was held and released later): not sent.
 */
const READ_CONVERSION = `select c.*, (select t.source from conversions t where c.trust = 'public' and t.site_id = c.site_id
    and t.message_id = c.message_id and t.trust = 'trusted' limit 1) as superseded_by
  from conversions c where c.id = ?`

function tooOld(occurredAt: Date, maxDays: number, platform: string): string | undefined {
  const days = (Date.now() - occurredAt.getTime()) / 86_400_000
  if (days <= maxDays) return undefined
  return `the conversion happened ${Math.floor(days)} days ago; ${platform} takes events at most ${maxDays} days old`
}

interface ConversionRow {
  id: string, site_id: string, message_id: string, event: string, standard_event: string, occurred_at: string | Date
  value: number | null, currency: string | null, order_id: string | null, channel: string, items: ConversionEvent['items']
  identity: ConversionEvent['identity'], click_ids: ConversionEvent['clickIds'], ip: string | null, user_agent: string | null
  page_url: string | null, consent: string, confirmation: string, trust: Trust
  /** The source of a trusted conversion with the same messageId, for a public one. */
  superseded_by?: string | null
}

/** The stored conversion as adapters see it. */
function toEvent(row: ConversionRow): ConversionEvent {
  const consent = row.consent as ConsentState
  return {
    messageId: platformEventId(row.message_id, row.trust),
    siteId: row.site_id,
    event: row.event,
    standardEvent: row.standard_event as StandardEvent,
    occurredAt: new Date(row.occurred_at),
    value: row.value ?? undefined,
    currency: row.currency ?? undefined,
    orderId: row.order_id ?? undefined,
    items: row.items,
    channel: row.channel as ConversionEvent['channel'],
    identity: row.identity,
    clickIds: row.click_ids,
    ip: row.ip ?? undefined,
    userAgent: row.user_agent ?? undefined,
    pageUrl: row.page_url ?? undefined,
    consent: { adUserData: consent, adPersonalization: consent },
    confirmation: row.confirmation as ConversionEvent['confirmation'],
  }
}


import type { Storage } from 'unstorage'
import type { Registry, AdPlatformDefinition } from '../registry.ts'
import type { ResolvedConfig } from '../config/schema.ts'
import type { RunPrepared } from '../db/prepared.ts'
import type { AttemptResult } from './answer.ts'
import { dispatch } from './dispatch.ts'
import { claimDueDeliveries, readConversion, recordAttempt, type AttemptUpdate, type ClaimedDelivery } from './queries/outbox.ts'
import { nextStep } from './retry.ts'
import { toEvent } from './rows.ts'
import type { ConversionEvent, DeliveryOutcome } from './types.ts'
import { supersededReason } from './trust.ts'

export interface OutboxDeps {
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

export function createOutbox(deps: OutboxDeps): Outbox {
  const { prepared, registry, storage, policy } = deps
  const cache = {
    get: (key: string) => storage.getItem<string>(`cache:auth:${key}`),
    set: (key: string, value: string, ttlSeconds: number) => storage.setItem(`cache:auth:${key}`, value, { ttl: ttlSeconds }),
  }

  /** Calls the platform and decides the row's next state; `record` writes it. */
  const attemptOne = async (row: ClaimedDelivery, given?: ConversionEvent): Promise<AttemptUpdate> => {
    const configured = registry.forSite(row.site_id, 'ad-platform').find((c) => c.definition.name === row.provider)
    const stored = given ? undefined : await readConversion(prepared, row.conversion_id)
    const event = given ?? (stored ? toEvent(stored) : undefined)
    // A skip is no attempt: the count the claim added is taken back.
    const skipped = (error: string): AttemptUpdate => ({
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

  const attempt = async (rows: readonly ClaimedDelivery[], event?: ConversionEvent): Promise<AttemptResult[]> => {
    const settled = await Promise.all(rows.map((row) => attemptOne(row, event).catch((error: unknown) => {
      deps.onError(error)
      return undefined
    })))
    const updates = settled.filter((u): u is AttemptUpdate => u !== undefined)
    if (updates.length) await recordAttempt(prepared, updates).catch(deps.onError)
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
      const rows = await claimDueDeliveries(prepared, policy.leaseSeconds, limit)
      await attempt(rows)
      return rows.length
    },
  }
}

function tooOld(occurredAt: Date, maxDays: number, platform: string): string | undefined {
  const days = (Date.now() - occurredAt.getTime()) / 86_400_000
  if (days <= maxDays) return undefined
  return `the conversion happened ${Math.floor(days)} days ago; ${platform} takes events at most ${maxDays} days old`
}

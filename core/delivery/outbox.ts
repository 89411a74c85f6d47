import type { Storage } from 'unstorage'
import type { Registry, AdPlatformDefinition } from '../registry.ts'
import type { ResolvedConfig } from '../config/schema.ts'
import type { RunPrepared } from '../db/prepared.ts'
import type { AttemptResult } from './answer.ts'
import { stepOf } from './adjust.ts'
import { dispatch, type Wire } from './dispatch.ts'
import { observeDispatch } from '../metrics/observe.ts'
import { asLateLead } from './late-lead.ts'
import { createBatcher } from './batcher.ts'
import { retryTransient } from '../db/transient.ts'
import { claimDueDeliveries, claimOrphanDeliveries, readConversions, recordAttempt, type AttemptUpdate, type ClaimedDelivery, type StoredConversion } from './queries/outbox.ts'
import { sweepInlineAttempts } from './queries/inline.ts'
import { createRequestBudget } from './request-budget.ts'
import { platformCredentials } from './queries/credentials.ts'
import type { Keyring } from '../secrets/keyring.ts'
import { createSealedCache } from '../secrets/sealed-cache.ts'
import { nextStep } from './retry.ts'
import { erasedReason } from './clear-fields.ts'
import { toEvent } from './rows.ts'
import type { AdjustmentEvent, ConversionAdjustment, ConversionEvent, DeliveryOutcome } from './types.ts'
import { supersededReason } from './trust.ts'
import { platformVerdict } from './platform-verdict.ts'

/** A site's connection to one ad platform: the unit of batching, request budgets and worker claims. */
export interface DeliveryAccount { siteId: string, provider: string, claim: number }

/** Rows one worker claim takes at most: a full request for most platforms, a short statement for the largest. */
const MAX_CLAIM = 1000

export interface OutboxDeps {
  /** The sites' ids now, whose platform accounts the worker serves (a dashboard-made site joins while running). */
  siteIds: () => readonly string[]
  prepared: RunPrepared
  registry: Registry
  storage: Storage
  /** Seals the platforms' rotated tokens (platform_credentials) and cached access tokens. */
  keyring: Keyring
  policy: ResolvedConfig['delivery']
  onError: (error: unknown) => void
}

export interface Outbox {
  /** Seconds a claim lasts (config delivery.leaseSeconds); a crashed holder's rows are free after it. */
  leaseSeconds: number
  /** Seconds a public conversion with a sender-chosen messageId waits before its first attempt (delivery.publicGraceSeconds). */
  publicGraceSeconds: number
  /**
   * How the intake attempts a new conversion at this platform account: `now` (inline, before answering); `later`
   * when its request budget for this second is used up (the row is claimed and this process sends it with the next
   * batch, after answering); `worker` when this process already holds a large backlog for it (the row is left
   * unclaimed for any instance's worker). `reason` says so in the answer.
   */
  plan: (siteId: string, provider: string) => { kind: 'now' } | { kind: 'later' | 'worker', reason: string }
  /** Every configured platform account (a site's connection to a provider), with the rows one claim takes for it. */
  accounts: () => DeliveryAccount[]
  /**
   * Claims up to `account.claim` due deliveries of one account (any instance, never twice at once) and attempts them
   * together: one platform request when the adapter's maxBatchSize allows. Returns how many it claimed.
   */
  runDue: (account: DeliveryAccount) => Promise<number>
  /** Claims up to `limit` due deliveries of platforms no longer configured for their site, and ends them failed. */
  runOrphans: (limit: number) => Promise<number>
  /**
   * Writes as pending rows the deliveries held by up to `limit` conversions whose inline attempt's lease ran out
   * (its process died before the record), so the claims find them. Returns how many conversions.
   */
  sweepInline: (limit: number) => Promise<number>
  /**
   * Attempts deliveries this process holds the lease on. `event` is the conversion as the caller already
   * has it (intake), which saves reading it back. Concurrent attempts to one platform account share a request.
   * `inline` (the default with an event) waits at most a few ms for a request budget, then leaves the row to the
   * worker; `later` and `worker` wait for the budget.
   */
  attempt: (rows: readonly ClaimedDelivery[], event?: ConversionEvent, mode?: AttemptMode) => Promise<AttemptResult[]>
}

/** The usual plan, asked per platform of every conversion: one object, read only. */
const SEND_NOW = Object.freeze({ kind: 'now' } as const)
/** Requests to one platform account running at once; what arrives meanwhile joins the next request. */
const SENDS_IN_FLIGHT = 2
/**
 * Attempt records written at once: one statement at a time for inline attempts and one for the worker's, so the next
 * one carries everything that gathered.
 */
const RECORDS_PER_STATEMENT = 2000
/** Pauses before a failed record is run again (retryTransient), as many as fit in a quarter of the lease. */
const RECORD_RETRY_PAUSES_MS = [100, 400, 1600]

/** The first pauses of RECORD_RETRY_PAUSES_MS whose sum stays within `budgetMs`. */
function pausesWithin(budgetMs: number): number[] {
  const pauses: number[] = []
  for (const ms of RECORD_RETRY_PAUSES_MS) {
    budgetMs -= ms
    if (budgetMs < 0) break
    pauses.push(ms)
  }
  return pauses
}

/**
 * An event on its way to one platform: the row, the event, and the adapter with this site's options; for a refund, the
 * adjustment (sent through the adapter's `adjustments`); `note` when a rule other than the usual one shaped it.
 */
interface Sendable { row: ClaimedDelivery, event: ConversionEvent, platform: AdPlatformDefinition<unknown>, options: unknown, adjustment?: ConversionAdjustment, note?: string, group?: string }
/** Joins an account's batching key to an adapter's request group (`requestGroup`); the budget stays the account's. */
const GROUP_MARK = '\u0001'
type Sent = { outcome: DeliveryOutcome, httpStatus: number | null, durationMs: number, receipt?: string } | { deferredMs: number }
/** An attempt's record (with the platform's receipt for a request it judges later, diagnostics.ts). */
type Attempted = AttemptUpdate & { queued?: true }
/** Events this process keeps waiting for one platform account's budget, in full requests, before it leaves new ones to the worker. */
const LATER_BACKLOG_BATCHES = 4

export type AttemptMode = 'inline' | 'later' | 'worker'

/** How soon an adjustment whose conversion is still on its way to the platform is looked at again. */
const ADJUSTMENT_WAIT_MS = 60_000

export function createOutbox(deps: OutboxDeps): Outbox {
  const { prepared, registry, storage, keyring, policy } = deps
  const cache = createSealedCache(storage, keyring, 'cache:auth:')
  // One batching key per platform account: a site's connection to a provider.
  const platforms = new Map<string, AdPlatformDefinition<unknown>>()
  // Each account's key made once: asked per platform of every conversion, by plan and by send.
  const accountKeys = new Map<string, Map<string, string>>()
  const accountKey = (siteId: string, provider: string) => {
    let ofSite = accountKeys.get(siteId)
    if (!ofSite) accountKeys.set(siteId, ofSite = new Map())
    let key = ofSite.get(provider)
    if (key === undefined) ofSite.set(provider, key = `${siteId}\u0000${provider}`)
    return key
  }
  const budget = createRequestBudget(storage, (key) => platforms.get(key)?.maxRequestsPerSecond)
  // Refunds go to an endpoint of their own, with its own batch size and request budget: a batching key of their own.
  const adjustmentLimits = new WeakMap<AdPlatformDefinition<unknown>, AdPlatformDefinition<unknown>>()
  const limitsOf = (platform: AdPlatformDefinition<unknown>, adjustment: boolean) => {
    if (!adjustment || !platform.adjustments) return platform
    let limits = adjustmentLimits.get(platform)
    if (!limits) adjustmentLimits.set(platform, limits = { ...platform, maxBatchSize: platform.adjustments.maxBatchSize, maxRequestsPerSecond: platform.adjustments.maxRequestsPerSecond })
    return limits
  }
  const queuedMessage = (platform: AdPlatformDefinition<unknown>) =>
    `queued: ${platform.name} takes at most ${platform.maxRequestsPerSecond} requests a second; it goes with the next batch`
  const sends = createBatcher<Sendable, Sent>({
    maxInFlight: SENDS_IN_FLIGHT,
    lingerMs: policy.batchWindowMs,
    maxBatch: (key) => platforms.get(key)?.maxBatchSize ?? 1,
    wait: (key) => budget.take(key.split(GROUP_MARK)[0]!),
    async run(_key, items) {
      const { platform, options, adjustment } = items[0]!
      // A refresh token the platform issued in place of the configured one is kept per site (platform_credentials).
      const ctx = { cache, timeoutMs: policy.requestTimeoutMs, credentials: platformCredentials(prepared, keyring, items[0]!.row.site_id, platform.name) }
      const result = adjustment
        ? await dispatch(platform, options, items.map((item): AdjustmentEvent => ({ conversion: item.event, adjustment: item.adjustment! })), ctx, platform.adjustments as Wire<AdjustmentEvent>)
        : await dispatch(platform, options, items.map((item) => item.event), ctx)
      observeDispatch(platform.name, adjustment ? 'adjustment' : 'conversion', result)
      return result.outcomes.map((outcome) => ({ outcome, httpStatus: result.httpStatus, durationMs: result.durationMs, ...(result.receipt ? { receipt: result.receipt } : {}) }))
    },
    defer: (_item, waitMs) => ({ deferredMs: waitMs }),
  })
  // One statement at a time each, so the next one carries everything that gathered meanwhile. A record that fails for
  // a deadlock with another instance's record or a lost connection is run again, within a quarter of the lease: lost,
  // its deliveries would be sent again once the lease ran out. It may run twice (recordAttempt writes final states).
  const recordPauses = pausesWithin(policy.leaseSeconds * 250)
  const records = createBatcher<AttemptUpdate, void>({
    maxInFlight: 1,
    maxBatch: () => RECORDS_PER_STATEMENT,
    async run(_key, batch) {
      await retryTransient(() => recordAttempt(prepared, batch), recordPauses)
      return batch.map(() => undefined)
    },
  })

  /** The row's final state without a platform call (skipped, or failed before one), else what to send. */
  const prepare = (row: ClaimedDelivery, event: ConversionEvent | undefined, stored: StoredConversion | undefined): AttemptUpdate | Sendable => {
    if (stored?.superseded_by) return skipped(row, supersededReason(stored.superseded_by))
    const configured = configuredFor(row.site_id, row.provider)
    if (!configured) return ended(row, 'failed', `platform ${row.provider} is no longer configured for site ${row.site_id}`, row.attempts)
    if (!event) return ended(row, 'failed', 'conversion not found', row.attempts)
    const platform = configured.definition as AdPlatformDefinition<unknown>
    // Never sent degraded: a retry that finds the clear fields erased (a replay racing the erasure) ends failed, saying so.
    if (row.kind !== 'adjustment' && stored?.clear_erased_at) return ended(row, 'failed', erasedReason(stored.clear_erased_at, policy.retryWindowDays), row.attempts)
    if (row.kind === 'adjustment') {
      const step = stepOf(row, event, platform, configured.options)
      if ('skip' in step) return skipped(row, step.skip)
      if ('wait' in step) {
        return { ...skipped(row, step.wait), status: 'pending', next_attempt_at: new Date(Date.now() + ADJUSTMENT_WAIT_MS).toISOString() }
      }
      return { row, event, platform, options: configured.options, adjustment: step.item.adjustment }
    }
    // A lead qualified after the platform's window is sent as the platform documents CRM-qualified leads
    // (late-lead.ts); the adapter then judges the event as it will be sent.
    const late = asLateLead(event, stored, platform)
    const sending = late?.event ?? event
    const verdict = platformVerdict(platform, configured.options, sending)
    if (verdict.kind === 'broken') return ended(row, 'failed', verdict.reason, row.attempts)
    if (verdict.kind === 'skip') return skipped(row, verdict.reason)
    return { row, event: sending, platform, options: configured.options, note: late?.note, group: verdict.group }
  }

  /** The site's configured adapter for the row's platform (asked once per delivery: an indexed loop, no iterator). */
  const configuredFor = (siteId: string, provider: string) => {
    const configured = registry.forSite(siteId, 'ad-platform')
    for (let i = 0; i < configured.length; i++) if (configured[i]!.definition.name === provider) return configured[i]
    return undefined
  }

  /**
   * Sends the event with whatever else is going to the same platform account, then decides the row's next state. Not
   * an async function: its suspended frame was the largest allocation of a delivery.
   */
  const send = (item: Sendable, mode: AttemptMode): Promise<Attempted> => {
    const { row, platform } = item
    const adjusting = item.adjustment !== undefined
    const account = adjusting ? `${accountKey(row.site_id, row.provider)}\u0000adjustments` : accountKey(row.site_id, row.provider)
    // Events of another request group (TikTok's offline events) never share a request with the account's others.
    const key = item.group ? `${account}${GROUP_MARK}${item.group}` : account
    platforms.set(account, limitsOf(platform, adjusting))
    platforms.set(key, limitsOf(platform, adjusting))
    return sends.add(key, item, mode === 'inline' ? policy.budgetWaitMs : undefined).then((sent) => toAttempted(item, sent))
  }

  /** The row's next state after its send: deferred by the budget, or the platform's verdict as the retry policy reads it. */
  const toAttempted = (item: Sendable, sent: Sent): Attempted => {
    const { row, event, platform } = item
    if ('deferredMs' in sent) {
      // Not attempted: the count the claim added is taken back, and the worker finds the row due after the wait.
      return {
        id: row.id, conversion_id: row.conversion_id, provider: row.provider, status: 'pending', attempts: Math.max(0, row.attempts - 1), http_status: null,
        error: queuedMessage(platform),
        duration_ms: null, next_attempt_at: new Date(Date.now() + sent.deferredMs).toISOString(), sent_at: null, queued: true, held: row.held,
      }
    }
    const { outcome, httpStatus, durationMs } = sent
    const maxAgeDays = item.adjustment !== undefined ? platform.adjustments!.maxConversionAgeDays : platform.maxEventAgeDays
    const step = nextStep(outcome, row.attempts, event.occurredAt, maxAgeDays, policy)
    const update: Attempted = {
      id: row.id, conversion_id: row.conversion_id, provider: row.provider, status: step.status, attempts: row.attempts, http_status: httpStatus,
      error: step.status === 'sent' ? null : step.error, duration_ms: durationMs, note: item.note ?? null,
      next_attempt_at: step.status === 'retrying' ? step.nextAttemptAt.toISOString() : null, sent_at: step.status === 'sent' ? new Date().toISOString() : null,
      held: row.held,
    }
    if (step.status === 'sent' && sent.receipt && platform.diagnostics) {
      update.receipt = { delivery_id: row.id, site_id: row.site_id, provider: row.provider, receipt: sent.receipt, requested_at: new Date().toISOString(), due_at: new Date(Date.now() + platform.diagnostics.firstCheckAfterMs).toISOString() }
    }
    return update
  }

  const attempt = async (rows: readonly ClaimedDelivery[], given?: ConversionEvent, mode: AttemptMode = given ? 'inline' : 'worker'): Promise<AttemptResult[]> => {
    let stored: Map<string, StoredConversion> | undefined
    try {
      stored = given ? undefined : await readConversions(prepared, rows.map((row) => row.conversion_id))
    }
    catch (error) {
      // Nothing attempted: the rows keep their lease, and the worker takes them again when it runs out.
      deps.onError(error)
      return rows.map(interrupted)
    }
    const recordKey = mode === 'inline' ? 'inline' : 'later'
    const updates = await Promise.all(rows.map(async (row): Promise<Attempted | undefined> => {
      try {
        const conversion = stored?.get(row.conversion_id)
        const next = prepare(row, given ?? (conversion ? toEvent(conversion) : undefined), conversion)
        const attempted: Attempted = 'status' in next ? next : await send(next, mode)
        try {
          // Inline answers wait for their record: they never queue behind a worker batch's larger statement. A receipt
          // is noted in the same statement, so the look at the platform's later verdict (diagnostics.ts) finds the row sent.
          await records.add(recordKey, attempted.queued ? withoutQueued(attempted) : attempted)
        }
        catch (error) {
          deps.onError(error)
        }
        return attempted
      }
      catch (error) {
        deps.onError(error)
        return undefined
      }
    }))
    // A row without an update keeps its lease; when it runs out the worker tries again, so nothing is lost.
    return rows.map((row, i) => {
      const update = updates[i]
      if (!update) return interrupted(row)
      return update.queued
        ? { id: row.id, provider: row.provider, status: update.status, error: update.error, queued: true }
        : { id: row.id, provider: row.provider, status: update.status, error: update.error }
    })
  }

  return {
    plan(siteId, provider) {
      const key = accountKey(siteId, provider)
      const platform = platforms.get(key)
      const reopensInMs = budget.spent(key)
      // The next window opens soon enough, and the event fits its first requests: it waits, and the answer says sent.
      if (!platform || reopensInMs === 0 || (reopensInMs <= policy.budgetWaitMs && sends.waiting(key) < SENDS_IN_FLIGHT * platform.maxBatchSize)) return SEND_NOW
      const kind = sends.waiting(key) < LATER_BACKLOG_BATCHES * platform.maxBatchSize ? 'later' : 'worker'
      return { kind, reason: queuedMessage(platform) }
    },
    leaseSeconds: policy.leaseSeconds,
    publicGraceSeconds: policy.publicGraceSeconds,
    attempt,
    accounts: () => deps.siteIds().flatMap((siteId) => registry.forSite(siteId, 'ad-platform').map((c) => ({
      siteId, provider: c.definition.name, claim: Math.min(MAX_CLAIM, c.definition.maxBatchSize),
    }))),
    async runDue(account) {
      const rows = await claimDueDeliveries(prepared, policy.leaseSeconds, account.claim, account)
      await attempt(rows)
      return rows.length
    },
    sweepInline: (limit) => sweepInlineAttempts(prepared, limit),
    async runOrphans(limit) {
      const configured = deps.siteIds().flatMap((siteId) => registry.forSite(siteId, 'ad-platform').map((c) => `${siteId}:${c.definition.name}`))
      const rows = await claimOrphanDeliveries(prepared, policy.leaseSeconds, limit, configured)
      await attempt(rows)
      return rows.length
    },
  }
}

/** A row ended without a platform call. */
function ended(row: ClaimedDelivery, status: 'skipped' | 'failed', error: string, attempts: number): AttemptUpdate {
  return { id: row.id, conversion_id: row.conversion_id, provider: row.provider, status, attempts, http_status: null, error, duration_ms: null, next_attempt_at: null, sent_at: null, held: row.held }
}


/** A skip is no attempt: the count the claim added is taken back. */
function skipped(row: ClaimedDelivery, error: string): AttemptUpdate {
  return ended(row, 'skipped', error, Math.max(0, row.attempts - 1))
}

/** The record of a row dcgate held back: `queued` is for the answer only. */
function withoutQueued({ queued: _queued, ...update }: Attempted): AttemptUpdate {
  return update
}

function interrupted(row: ClaimedDelivery): AttemptResult {
  return { id: row.id, provider: row.provider, status: 'pending', error: 'attempt interrupted; the worker retries it' }
}


/**
 * Delayed diagnostics (issue 24): some platforms take a request, answer, and judge it later (Google's Data Manager API
 * processes events after answering `{requestId}`, and tells how it went through requestStatus:retrieve). A delivery
 * sent with such a receipt is looked at again: first after the adapter's `firstCheckAfterMs`, then spaced by the time
 * since the request (exponential backoff), until the platform gives a final answer or `giveUpAfterMs` passes. The
 * report shows what the platform said; a delayed rejection turns the delivery `failed` with the platform's words.
 *
 * One cluster job (one instance per run, under a lease) claims the due looks of at most MAX_REQUESTS_PER_RUN requests
 * (`for update skip locked`, so an instance that overlaps one cut short by a crash never takes the same rows), and
 * makes one status call per request, whatever the number of its events.
 */
import type { Storage } from 'unstorage'
import type { JobHandle, ScheduledJob } from '../jobs/scheduler.ts'
import type { AdPlatformDefinition, DiagnosticsSupport, Registry } from '../registry.ts'
import type { RunPrepared } from '../db/prepared.ts'
import { labelOf } from './adjust.ts'
import { toHeaders } from './dispatch.ts'
import { claimDueDiagnoses, saveDiagnoses, type DiagnosisUpdate, type DueDiagnosis } from './queries/diagnostics.ts'
import { readConversions } from './queries/outbox.ts'
import { toEvent } from './rows.ts'
import type { ConversionEvent, Diagnosis } from './types.ts'
import { httpRequest } from './http-request.ts'

/** Status calls one run makes at most: a small share of a platform's request quota (Google: 300 a minute per project). */
const MAX_REQUESTS_PER_RUN = 20
/** How long a claimed look is held before another run may take it up (a run cut short by a crash). */
const LEASE_SECONDS = 300
const HOUR_MS = 3_600_000

export interface DiagnosticsDeps {
  prepared: RunPrepared
  registry: Registry
  storage: Storage
  timeoutMs: number
  onError: (error: unknown) => void
}

/** Runs the looks once a minute (sooner with a short worker interval, as in tests): a cluster job. */
export function scheduleDiagnostics(schedule: (job: ScheduledJob) => JobHandle, deps: DiagnosticsDeps, workerIntervalMs: number): JobHandle {
  return schedule({ name: 'delivery:diagnostics', everyMs: Math.min(60_000, 60 * workerIntervalMs), run: (signal) => runDiagnostics(deps, signal) })
}

/** One round: claim due looks, one status call per request, save what each event's platform said. Answers how many looks. */
export async function runDiagnostics(deps: DiagnosticsDeps, signal: AbortSignal): Promise<number> {
  const due = await claimDueDiagnoses(deps.prepared, MAX_REQUESTS_PER_RUN, LEASE_SECONDS)
  if (due.length === 0) return 0
  const conversions = await readConversions(deps.prepared, due.map((row) => row.conversion_id))
  const updates: DiagnosisUpdate[] = []
  for (const rows of groupByRequest(due)) {
    if (signal.aborted) break
    const { site_id: siteId, provider, receipt } = rows[0]!
    const configured = deps.registry.forSite(siteId, 'ad-platform').find((c) => c.definition.name === provider)
    const platform = configured?.definition as AdPlatformDefinition<unknown> | undefined
    const events = rows.map((row) => conversions.get(row.conversion_id)).map((stored) => stored && toEvent(stored))
    if (!platform?.diagnostics || events.some((event) => !event)) {
      updates.push(...rows.map((row) => final(row, `diagnostics not read: ${platform ? 'the conversion is gone' : `${provider} is no longer configured for this site`}`)))
      continue
    }
    const diagnoses = await look(platform, platform.diagnostics, configured!.options, receipt, events as ConversionEvent[], deps)
    updates.push(...rows.map((row, i) => toUpdate(row, diagnoses[i]!, platform)))
  }
  await saveDiagnoses(deps.prepared, updates)
  return due.length
}

function groupByRequest(rows: readonly DueDiagnosis[]): DueDiagnosis[][] {
  const groups = new Map<string, DueDiagnosis[]>()
  for (const row of rows) {
    const key = `${row.site_id}\u0000${row.provider}\u0000${row.receipt}`
    groups.set(key, [...groups.get(key) ?? [], row])
  }
  return [...groups.values()]
}

/** One status call. Never throws: an unreachable platform or an adapter bug is a `retry` for every event. */
async function look(
  platform: AdPlatformDefinition<unknown>, support: DiagnosticsSupport<unknown>, options: unknown, receipt: string, events: ConversionEvent[], deps: DiagnosticsDeps,
): Promise<Diagnosis[]> {
  const all = (diagnosis: Diagnosis) => events.map(() => diagnosis)
  const signal = AbortSignal.timeout(deps.timeoutMs)
  const cache = {
    get: (key: string) => deps.storage.getItem<string>(`cache:auth:${key}`),
    set: (key: string, value: string, ttlSeconds: number) => deps.storage.setItem(`cache:auth:${key}`, value, { ttl: ttlSeconds }),
  }
  try {
    const authorize = support.authorize ?? platform.authorize
    const request = support.toRequest(receipt, options)
    // `fresh` skips a cached access token: after a 401 it may have been revoked early (as dispatch.ts does).
    const call = async (fresh: boolean) => {
      const headers = authorize ? await authorize(options, { fetch, cache: fresh ? { get: async () => null, set: cache.set } : cache, signal }) : {}
      return httpRequest(request.url, {
        method: request.method, headers: { ...request.headers, ...headers }, body: request.method === 'GET' ? undefined : request.body, signal,
      })
    }
    let response = await call(false)
    if (response.statusCode === 401 && authorize) {
      await response.body.dump()
      response = await call(true)
    }
    const body = await response.body.text()
    const diagnoses = support.parseResponse({ status: response.statusCode, headers: toHeaders(response.headers), body }, events, options)
    return diagnoses.length === events.length ? diagnoses : all({ status: 'retry', message: `adapter ${platform.name} read ${diagnoses.length} diagnoses for ${events.length} events` })
  }
  catch (error) {
    return all({ status: 'retry', message: `could not read ${labelOf(platform)}'s diagnostics: ${error instanceof Error ? error.message : String(error)}` })
  }
}

/** The row's next state: final, or the next look spaced by the time since the request, until the platform's limit. */
export function toUpdate(row: DueDiagnosis, diagnosis: Diagnosis, platform: AdPlatformDefinition<unknown>, now = Date.now()): DiagnosisUpdate {
  const support = platform.diagnostics!
  if (diagnosis.status === 'done') return final(row, diagnosis.note)
  if (diagnosis.status === 'failed') return { ...final(row, diagnosis.message), failed: diagnosis.message }
  const age = now - new Date(row.requested_at).getTime()
  const words = diagnosis.status === 'processing' ? `${labelOf(platform)} is still processing the request` : diagnosis.message
  if (age >= support.giveUpAfterMs) {
    return final(row, `${words}; no final answer ${Math.round(age / HOUR_MS)} hours after the request, so it is no longer looked at`)
  }
  const wait = diagnosis.status === 'retry' && diagnosis.retryAfterMs ? diagnosis.retryAfterMs : Math.max(support.firstCheckAfterMs, age)
  return { delivery_id: row.delivery_id, due_at: new Date(now + wait).toISOString(), diagnosis: words, failed: null }
}

function final(row: DueDiagnosis, diagnosis: string): DiagnosisUpdate {
  return { delivery_id: row.delivery_id, due_at: null, diagnosis, failed: null }
}

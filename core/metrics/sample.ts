import type { MikroORM } from '@mikro-orm/postgresql'
import type { RunPrepared } from '../db/prepared.ts'
import { metrics } from './registry.ts'

/** A scrape waits this long for the outbox query; a slower database leaves the gauges as they were. */
export const SCRAPE_QUERY_TIMEOUT_MS = 2000

/**
 * Deliveries not settled yet: the rows the partial index deliveries_unsettled_index holds, and those an inline attempt
 * holds (`all_deliveries`), so a process that died mid-attempt shows in the backlog before the worker's sweep.
 */
const OUTBOX_BACKLOG = {
  name: 'dcgate_metrics_outbox_v2',
  text: `select provider, count(*)::int as pending, extract(epoch from now() - min(created_at))::float8 as oldest_seconds
    from all_deliveries where status in ('pending', 'retrying') group by provider`,
  reusePlan: false,
  timeoutMs: SCRAPE_QUERY_TIMEOUT_MS,
}

/**
 * Reads the outbox backlog into its gauges: one query, given up after SCRAPE_QUERY_TIMEOUT_MS. A platform with
 * nothing waiting reads 0 (its earlier value is not left standing). Never throws: a failure is counted.
 */
export async function sampleOutbox(prepared: RunPrepared): Promise<void> {
  let rows: { provider: string, pending: number, oldest_seconds: number }[]
  try {
    rows = await withTimeout(prepared(OUTBOX_BACKLOG, []), SCRAPE_QUERY_TIMEOUT_MS)
  }
  catch {
    metrics.outboxScrapeErrors.inc()
    return
  }
  metrics.outboxPending.reset()
  metrics.outboxOldestAge.reset()
  for (const row of rows) {
    metrics.outboxPending.set({ platform: row.provider }, row.pending)
    metrics.outboxOldestAge.set({ platform: row.provider }, Math.max(0, row.oldest_seconds))
  }
}

interface TarnPool { numUsed: () => number, numFree: () => number, numPendingAcquires: () => number }

/** knex's pool (tarn) as it is now; looked up per scrape, since a reconnect replaces knex's client and its pool. */
export function samplePool(orm: MikroORM): void {
  const pool = (orm.em.getConnection().getKnex().client as { pool?: TarnPool }).pool
  if (!pool) return
  metrics.dbPool.set({ state: 'used' }, pool.numUsed())
  metrics.dbPool.set({ state: 'free' }, pool.numFree())
  metrics.dbPool.set({ state: 'pending' }, pool.numPendingAcquires())
}

/** The promise's outcome, or a rejection after `ms` (the work itself is left to its own timeout). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

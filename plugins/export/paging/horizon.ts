import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import type { ResolvedConfig } from '../../../core/config/schema.ts'
import { parseInstant, sqlTime, type Position } from './instant.ts'

/**
 * The default `until`: the newest time before which no record can still appear (docs/api/export.md, "Records being
 * written"). Read in a statement of its own, before the page's statement takes its snapshot: a writer still running
 * when the horizon is read has a start time at or after the horizon, so every record before it has committed by
 * then and is visible to the page that follows.
 */
export type Horizon = (siteId: string) => Promise<Position>

/**
 * Oldest start of a transaction still running in this database, other than ours. A record's `now()` default is
 * its transaction's start, and the transaction may commit long after: records stamped before it may yet appear.
 * Other roles' transactions show no start (unless we may read all stats); dcgate's own writers are our role.
 */
const OLDEST_RUNNING = `(select min(xact_start) from pg_stat_activity
  where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend')`

/** $1 lag in ms. */
const CLOCK_HORIZON: PreparedStatement = {
  name: 'dcgate_export_horizon_v1',
  text: `select ${sqlTime(`least(now() - make_interval(secs => $1::float8 / 1000), ${OLDEST_RUNNING})`)} as horizon`,
}

/** Rows of the walk below; past it the horizon stops at the last one walked (earlier than needed, never later). */
const WALK = 1000

/**
 * $1 lag in ms, $2 site, $3 how long a delivery may still be retried, in seconds. A conversion is listed once a
 * delivery is sent, at its deliveries' `created_at`: the horizon also stays before the oldest conversion still in
 * delivery (pending or retrying) with nothing sent yet, so it cannot turn up behind a client that paged past it.
 */
const DELIVERY_HORIZON: PreparedStatement = {
  name: 'dcgate_export_delivery_horizon_v1',
  text: `with walk as materialized (
      select d.created_at, d.conversion_id from deliveries d
      where d.site_id = $2 and d.status in ('pending', 'retrying') and d.created_at > now() - make_interval(secs => $3::float8)
      order by d.created_at limit ${WALK}
    )
    select ${sqlTime(`least(now() - make_interval(secs => $1::float8 / 1000), ${OLDEST_RUNNING},
      (select min(w.created_at) from walk w where not exists (select 1 from deliveries s where s.conversion_id = w.conversion_id and s.status = 'sent')),
      (select max(w.created_at) from walk w having count(*) >= ${WALK}))`)} as horizon`,
}

/**
 * How far behind now each kind of paging time may still be filled in:
 * - `SETTLE_MS` for times the database stamps (`now()` at insert): covers the instant between a writer taking its
 *   start time and showing in pg_stat_activity (a few function calls, no I/O), with a wide margin.
 * - visits: their start is the browser's time of the first hit (clamped to the receive time), written by the capture
 *   buffer up to `capture.flushIntervalMs` later; the tracking script itself sends hits up to 1 s after they happen.
 */
export const SETTLE_MS = 1000
const SCRIPT_BATCH_MS = 1000

/**
 * A horizon stays safe as it ages (it only gets further behind now), so each is reused for up to REUSE_MS: a client
 * paging quickly pays for at most two horizon reads a second, not one per page.
 */
const REUSE_MS = 500

export function createHorizons(prepared: RunPrepared, config: Readonly<ResolvedConfig>) {
  const reused = (read: (siteId: string) => Promise<{ horizon: string }[]>): Horizon => {
    const cache = new Map<string, { at: number, value: Promise<Position> }>()
    return (siteId) => {
      const hit = cache.get(siteId)
      if (hit && Date.now() - hit.at < REUSE_MS) return hit.value
      const value = read(siteId).then(toPosition)
      cache.set(siteId, { at: Date.now(), value })
      value.catch(() => cache.delete(siteId))
      return value
    }
  }
  const clock = (lagMs: number): Horizon => {
    const horizon = reused(() => prepared<{ horizon: string }>(CLOCK_HORIZON, [lagMs]))
    return () => horizon('')
  }
  return {
    database: clock(SETTLE_MS),
    visits: clock(SETTLE_MS + SCRIPT_BATCH_MS + config.capture.flushIntervalMs),
    deliveries: reused((siteId) => prepared<{ horizon: string }>(DELIVERY_HORIZON, [SETTLE_MS, siteId, retryWindowSeconds(config.delivery)])),
  }
}

/**
 * Longest a delivery can stay pending or retrying under the configured policy: every backoff at its longest, and
 * each attempt's lease and timeout. A delivery replayed by an operator later than that is not waited for.
 */
export function retryWindowSeconds(policy: ResolvedConfig['delivery']): number {
  let ms = 0
  for (let attempt = 1; attempt < policy.maxAttempts; attempt++) ms += Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** (attempt - 1))
  ms += policy.maxAttempts * (policy.leaseSeconds * 1000 + policy.requestTimeoutMs + policy.workerIntervalMs)
  return Math.ceil(ms / 1000) + 600
}

function toPosition(rows: { horizon: string }[]): Position {
  const position = parseInstant(rows[0]!.horizon)
  if (!position) throw new TypeError(`unexpected horizon ${rows[0]?.horizon}`)
  return position
}

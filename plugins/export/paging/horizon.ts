import type { RunPrepared } from '../../../core/db/prepared.ts'
import type { ResolvedConfig } from '../../../core/config/schema.ts'
import { readClockHorizon, readDeliveryHorizon } from '../queries/horizons.ts'
import { parseInstant, type Position } from './instant.ts'

/**
 * The default `until`: the newest time before which no record can still appear (docs/api/export.md, "Records being
 * written"). Read in a statement of its own, before the page's statement takes its snapshot: a writer still running
 * when the horizon is read has a start time at or after the horizon, so every record before it has committed by
 * then and is visible to the page that follows.
 */
export type Horizon = (siteId: string) => Promise<Position>

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
    const horizon = reused(() => readClockHorizon(prepared, lagMs))
    return () => horizon('')
  }
  return {
    database: clock(SETTLE_MS),
    visits: clock(SETTLE_MS + SCRIPT_BATCH_MS + config.capture.flushIntervalMs),
    deliveries: reused((siteId) => readDeliveryHorizon(prepared, SETTLE_MS, siteId, retryWindowSeconds(config.delivery))),
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

/**
 * Records the live events: every request handed to `requests:answered` of a kind the page shows goes into its
 * site's ring of the newest KEEP_PER_SITE (no database write on the request's path; an older one would only be
 * pruned), written in one statement per second by each instance, and pruned to the newest KEEP_PER_SITE per site
 * by one instance a minute. Why a pruned table: docs/architecture.md, "Live events".
 */
import type { AnsweredRequest } from '../../../core/http/answered.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { insertLive, pruneLive, type LiveRow } from '../queries/live.ts'
import { kindOfRoute } from './kinds.ts'
import { shownReason } from './reason.ts'
import { SiteRing } from './site-ring.ts'

/** Rows the page can show per site. */
export const KEEP_PER_SITE = 500
/** A day is plenty for a view of what just happened; a quiet site's rows do not linger. */
const KEEP_DAYS = 7
const FLUSH_EVERY_MS = 1_000
const PRUNE_EVERY_MS = 60_000

export interface LiveRecorder {
  /** Writes what waits now (the page calls it first, so its own instance's last requests show at once). */
  flush: () => Promise<void>
}

const recorders = new WeakMap<PluginContext, LiveRecorder>()

/** The recorder of this app (the page flushes it before reading); undefined before the plugin's setup ran. */
export function liveRecorderOf(ctx: PluginContext): LiveRecorder | undefined {
  return recorders.get(ctx)
}

export function recordLiveEvents(ctx: PluginContext): LiveRecorder {
  // Per site; in a database outage each keeps its newest only, so memory stays bounded.
  const rings = new Map<string, SiteRing>()
  ctx.hooks.hook('requests:answered', (answered) => {
    for (const request of answered) {
      if (!kindOfRoute(request.route)) continue
      let ring = rings.get(request.siteId)
      if (!ring) rings.set(request.siteId, ring = new SiteRing(KEEP_PER_SITE))
      ring.push(request)
    }
  })
  // One write at a time, in the order answered: the page's own flush and the timer's never overtake each other, so
  // the ids follow the answers (they order requests answered within the same millisecond).
  let writing: Promise<void> = Promise.resolve()
  const write = async () => {
    const rows: LiveRow[] = []
    for (const [siteId, ring] of rings) {
      if (!ring.empty) for (const request of ring.take(siteId)) rows.push(toRow(request)!)
    }
    if (!rows.length) return
    await insertLive(ctx.prepared, rows)
  }
  const flush = () => (writing = writing.catch(() => {}).then(write))
  ctx.schedule({ name: 'dashboard:live-flush', everyMs: FLUSH_EVERY_MS, scope: 'instance', atStart: false, run: flush })
  ctx.schedule({ name: 'dashboard:live-prune', everyMs: PRUNE_EVERY_MS, run: () => pruneLive(ctx.prepared, KEEP_PER_SITE, KEEP_DAYS) })
  ctx.hooks.hook('app:close', flush)
  const recorder = { flush }
  recorders.set(ctx, recorder)
  return recorder
}

function toRow(answered: AnsweredRequest & { atMs: number }): LiveRow | undefined {
  const kind = kindOfRoute(answered.route)
  if (!kind) return undefined
  return {
    siteId: answered.siteId, atMs: answered.atMs, kind, method: answered.method.slice(0, 8), route: answered.route.slice(0, 200),
    source: answered.source?.slice(0, 64) ?? null, status: answered.status, code: answered.code?.slice(0, 64) ?? null,
    reason: shownReason(answered), refused: answered.partlyRefused?.refused ?? null,
  }
}

import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { apiError } from '../../core/http/errors.ts'
import { FREE_EMAIL_CHECKS } from '../../core/sites/plans.ts'
import { countChecks, ensureQuotaRow } from './queries.ts'

/** Checks every site gets for free, for life (spec "Limits"; core/sites/plans.ts, which the dashboard shows too). */
export const FREE_CHECKS = FREE_EMAIL_CHECKS
/** A free site this far from its limit is counted without waiting for the database; closer, every check waits. */
export const FREE_MARGIN = 50
/** Counts granted without waiting are written within this long (one statement for every site). */
const FLUSH_MS = 25

export interface Quota {
  /** Counts the check or throws the spec's 429 (plan free, 500 used). */
  count: (site: ActiveSite) => Promise<void>
  /** Writes the counts not written yet (app:close). */
  flush: () => Promise<void>
}

interface Waiter { resolve: () => void, reject: (error: unknown) => void }

/**
 * The quota without a database round trip on most checks, exact where it decides anything:
 * - a paid site, or a free site at least FREE_MARGIN below 500 (by the highest total read plus every check this
 *   process counted or asked about since), is answered at once; its counts are written within FLUSH_MS, for all sites in one statement;
 * - a free site near or past its limit (or not read yet) waits for the database, which grants exactly what is left.
 *   Such checks arriving in one event-loop turn share one statement and are granted in arrival order.
 * With several instances, each may answer up to FREE_MARGIN / instances fast checks past the others' last counts:
 * the margin keeps that below 500. A crash loses at most FLUSH_MS of counts (never bills more).
 */
export function createQuota(ctx: PluginContext): Quota {
  const known = new Set<string>()
  /** The highest total the database answered, per site (totals only grow, whatever order answers arrive in). */
  const seen = new Map<string, number>()
  /** Checks asked of the database and not answered yet (waiting checks and fast counts being written), per site. */
  const pending = new Map<string, number>()
  let unwritten = new Map<string, number>()
  let waiting = new Map<string, Waiter[]>()
  let flushTimer: NodeJS.Timeout | undefined
  let waitScheduled = false

  const add = (counts: Map<string, number>, siteId: string, n: number) => counts.set(siteId, (counts.get(siteId) ?? 0) + n)
  /** What the site may have counted at most, by what this process knows (undefined before the first answer). */
  const estimate = (siteId: string) => {
    const total = seen.get(siteId)
    return total === undefined ? undefined : total + (unwritten.get(siteId) ?? 0) + (pending.get(siteId) ?? 0)
  }
  const ensureRows = async (sites: Iterable<string>) => {
    for (const siteId of sites) {
      if (known.has(siteId)) continue
      await ensureQuotaRow(ctx.prepared, siteId)
      known.add(siteId)
    }
  }
  const run = async (batch: Map<string, number>, grantAll: (siteId: string) => boolean) => {
    for (const [siteId, n] of batch) add(pending, siteId, n)
    try {
      await ensureRows(batch.keys())
      const rows = await countChecks(ctx.prepared, batch, grantAll, FREE_CHECKS)
      for (const row of rows) seen.set(row.site_id, Math.max(seen.get(row.site_id) ?? 0, Number(row.total)))
      return new Map(rows.map((row) => [row.site_id, Number(row.allowed)]))
    }
    finally {
      for (const [siteId, n] of batch) add(pending, siteId, -n)
    }
  }

  /** The write under way; a flush waits for it, so "flushed" means every count taken before it is in the database. */
  let writing: Promise<void> = Promise.resolve()
  const write = async () => {
    clearTimeout(flushTimer)
    flushTimer = undefined
    const batch = unwritten
    unwritten = new Map()
    if (batch.size === 0) return
    await run(batch, () => true).catch((error: unknown) => {
      // Put the counts back for the next flush (the next check's, or the retry job's); the check was answered already.
      for (const [siteId, n] of batch) add(unwritten, siteId, n)
      ctx.report(error, { source: 'email-risk:quota' })
    })
  }
  const flush = () => (writing = writing.then(write))

  const decideWaiting = async () => {
    waitScheduled = false
    const batch = waiting
    waiting = new Map()
    try {
      const allowed = await run(new Map([...batch].map(([siteId, list]) => [siteId, list.length])), () => false)
      for (const [siteId, list] of batch) {
        const granted = allowed.get(siteId) ?? 0
        list.forEach((waiter, i) => (i < granted ? waiter.resolve() : waiter.reject(quotaExceeded())))
      }
    }
    catch (error) {
      for (const list of batch.values()) for (const waiter of list) waiter.reject(error)
    }
  }

  return {
    count(site) {
      const total = estimate(site.id)
      if (site.plan !== 'free' || (total !== undefined && total + 1 <= FREE_CHECKS - FREE_MARGIN)) {
        add(unwritten, site.id, 1)
        flushTimer ??= setTimeout(() => void flush(), FLUSH_MS)
        return Promise.resolve()
      }
      return new Promise<void>((resolve, reject) => {
        const list = waiting.get(site.id) ?? []
        list.push({ resolve, reject })
        waiting.set(site.id, list)
        if (!waitScheduled) {
          waitScheduled = true
          setImmediate(() => void decideWaiting())
        }
      })
    },
    flush,
  }
}

/** Counts a failed flush put back are written again within this long, even when no check comes to flush them. */
const RETRY_MS = 1000

/** The quota, with its retry of failed flushes as an instance job (the counts wait in this process's memory). */
export function scheduleQuota(ctx: PluginContext): Quota {
  const quota = createQuota(ctx)
  ctx.schedule({ name: 'email-risk:quota-flush', everyMs: RETRY_MS, scope: 'instance', atStart: false, run: quota.flush })
  return quota
}

function quotaExceeded() {
  return apiError(429, {
    message: `The free plan's ${FREE_CHECKS} email checks are used up; upgrade the site's plan to keep checking`,
    code: 'EMAIL_CHECK_QUOTA_EXCEEDED',
  })
}

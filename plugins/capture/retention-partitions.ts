import { inTransaction, type TransactionSql } from '../../core/db/transaction.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { dayPartition, daysAhead, listDayPartitions, makeDayPartitions, sitesIn } from './store/partitions.ts'

/** A drop waits this long for the table lock at most: hits must not queue behind it; the next round tries again. */
const DROP_LOCK_TIMEOUT = '3s'
/** Counting one day's rows per site reads that day's index, and a new day may take rows from the default partition. */
const BACKGROUND_MS = 60_000

/** A sql runner outside any transaction, from the plugin's prepared runner (planned per call, rare statements). */
function oneOff(ctx: PluginContext): TransactionSql {
  return <R extends object>(text: string, values: readonly unknown[]) => ctx.prepared<R>({ name: '', text, reusePlan: false, timeoutMs: BACKGROUND_MS }, values)
}

/** The capture:partitions job: today's partition and the week after it exist (made by one instance, idempotent). */
export async function makePartitionsAhead(ctx: PluginContext, now = new Date()): Promise<string[]> {
  // Nearly every run finds the week there: look first, and open a transaction (and take the lock) only to make days.
  const existing = new Set((await listDayPartitions(oneOff(ctx))).map((p) => p.name))
  if (daysAhead(now).every((day) => existing.has(dayPartition(day).name))) return []
  const made = await inTransaction(ctx.orm, (sql) => makeDayPartitions(sql, daysAhead(now)), { timeoutMs: BACKGROUND_MS })
  if (made.length) ctx.logger.info(`capture: made the page_events partitions ${made.join(', ')}`)
  return made
}

/**
 * Drops the day partitions of page_events that every site with rows in them is done keeping: each such site has a
 * retention, and the partition ends before its cutoff. A site keeping everything, or longer, keeps the partition
 * whole (its shorter-lived neighbours' rows then go row by row, as before). Returns the rows dropped, per site.
 */
export async function dropExpiredPartitions(ctx: PluginContext, cutoffOf: (siteId: string) => Date | undefined): Promise<Map<string, number>> {
  const dropped = new Map<string, number>()
  const expired = (sites: readonly string[], end: Date) => sites.every((site) => {
    const cutoff = cutoffOf(site)
    return cutoff !== undefined && end <= cutoff
  })
  const cutoffs = ctx.sites.list().map((site) => cutoffOf(site.id)).filter((c): c is Date => c !== undefined)
  if (!cutoffs.length) return dropped
  const latest = Math.max(...cutoffs.map((c) => c.getTime()))
  const sql = oneOff(ctx)
  for (const partition of await listDayPartitions(sql)) {
    if (partition.to.getTime() > latest) break
    if (!expired(await sitesIn(sql, partition.name), partition.to)) continue
    const counts = await inTransaction(ctx.orm, async (trx) => {
      await trx(`set local lock_timeout = '${DROP_LOCK_TIMEOUT}'`, [])
      // Locked first, so the rows counted are the rows dropped (a replayed journal may still add old hits).
      await trx(`lock table "${partition.name}" in access exclusive mode`, [])
      const rows = await trx<{ site_id: string, n: number }>(`select site_id, count(*)::int as n from "${partition.name}" group by site_id`, [])
      if (!expired(rows.map((r) => r.site_id), partition.to)) return undefined
      await trx(`drop table "${partition.name}"`, [])
      return rows
    }, { timeoutMs: BACKGROUND_MS })
    for (const { site_id, n } of counts ?? []) dropped.set(site_id, (dropped.get(site_id) ?? 0) + n)
    if (counts) ctx.logger.info(`capture: retention dropped the partition ${partition.name} (${counts.reduce((sum, r) => sum + r.n, 0)} page events)`)
  }
  return dropped
}

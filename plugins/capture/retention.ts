import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { deleteOldIdentifiedUsers, deleteOldPageEvents, deleteOldVisits, RETENTION_BATCH } from './queries.ts'
import { dropExpiredPartitions } from './retention-partitions.ts'

/** How often retention runs (once across instances: a cluster job). */
export const RETENTION_EVERY_MS = 3_600_000

/** Each table's old rows, by the time that ages them (queries.ts). */
const DELETIONS = [
  { table: 'page_events', label: 'page events', expire: deleteOldPageEvents },
  { table: 'visits', label: 'visits', expire: deleteOldVisits },
  { table: 'identified_users', label: 'identified users', expire: deleteOldIdentifiedUsers },
] as const

export interface RetentionRound { siteId: string, days: number, deleted: Record<(typeof DELETIONS)[number]['table'], number> }

/** The days a site keeps its capture data: its own setting, else capture.retentionDays; undefined keeps everything. */
export function retentionDays(site: ActiveSite, fallback: number | undefined): number | undefined {
  return site.config.capture.retentionDays ?? fallback
}

/**
 * Deletes the capture data older than each site's retention (else `fallbackDays`, capture.retentionDays): page
 * events by arrival (whole day partitions where every site in them is past its cutoff, retention-partitions.ts), visits by their last hit, identified users by when they were last seen. Conversions are not
 * touched: their own lifecycle (delivery, export, erasure) decides.
 */
export function createRetention(ctx: PluginContext, fallbackDays: number | undefined) {
  let running: Promise<RetentionRound[]> | undefined

  async function expireSite(site: ActiveSite, days: number, now: Date, droppedEvents: number): Promise<RetentionRound> {
    const cutoff = new Date(now.getTime() - days * 86_400_000)
    const deleted = { page_events: droppedEvents, visits: 0, identified_users: 0 }
    for (const { table, expire } of DELETIONS) {
      let gone: number
      do {
        gone = await expire(ctx.prepared, site.id, cutoff)
        deleted[table] += gone
      } while (gone === RETENTION_BATCH)
    }
    const parts = DELETIONS.filter(({ table }) => deleted[table] > 0).map(({ table, label }) => `${deleted[table]} ${label}`)
    if (parts.length) ctx.logger.info(`capture: retention (${days} days) removed ${parts.join(', ')} of site ${site.id}`)
    return { siteId: site.id, days, deleted }
  }

  /** One round over every site with a retention; rounds never overlap within an instance. */
  function run(now = new Date()): Promise<RetentionRound[]> {
    running ??= (async () => {
      try {
        const sites = new Map(ctx.sites.list().map((s) => [s.id, s]))
        const cutoffOf = (siteId: string) => {
          const site = sites.get(siteId)
          const days = site && retentionDays(site, fallbackDays)
          return days === undefined ? undefined : new Date(now.getTime() - days * 86_400_000)
        }
        // Whole days first (a dropped partition is cheap however many rows it held), then the rows left before each cutoff.
        const dropped = await dropExpiredPartitions(ctx, cutoffOf)
        const rounds: RetentionRound[] = []
        for (const s of sites.values()) {
          const days = retentionDays(s, fallbackDays)
          if (days !== undefined) rounds.push(await expireSite(s, days, now, dropped.get(s.id) ?? 0))
        }
        return rounds
      }
      finally {
        running = undefined
      }
    })()
    return running
  }

  return { run }
}

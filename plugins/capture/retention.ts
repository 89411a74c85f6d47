import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'

const HOUR_MS = 3_600_000
/** Rows per statement: short statements, so the hot path's writes never wait long behind a delete. */
const BATCH = 5000
/** A batch's delete may wait on locks and indexes of a busy table: longer than a request may take, bounded still. */
const DELETE_STATEMENT_MS = 60_000

/**
 * Each table's old rows of one site, by the time that ages them, oldest first, up to BATCH at a time. `skip locked`:
 * two instances running at once share the work instead of waiting on each other's rows.
 */
const DELETIONS = [
  { table: 'page_events', label: 'page events', text: `delete from page_events where id in (select id from page_events where site_id = $1 and received_at < $2 order by received_at limit ${BATCH} for update skip locked)` },
  // A visit is kept while any of it is newer than the cutoff (ended_at is null until its second hit).
  { table: 'visits', label: 'visits', text: `delete from visits where id in (select id from visits where site_id = $1 and started_at < $2 and coalesce(ended_at, started_at) < $2 order by started_at limit ${BATCH} for update skip locked)` },
  { table: 'identified_users', label: 'identified users', text: `delete from identified_users where id in (select id from identified_users where site_id = $1 and last_seen_at < $2 order by last_seen_at limit ${BATCH} for update skip locked)` },
] as const

export interface RetentionRound { siteId: string, days: number, deleted: Record<(typeof DELETIONS)[number]['table'], number> }

/** The days a site keeps its capture data: its own setting, else capture.retentionDays; undefined keeps everything. */
export function retentionDays(site: ActiveSite, fallback: number | undefined): number | undefined {
  return site.config.capture.retentionDays ?? fallback
}

/**
 * Deletes the capture data older than each site's retention: page events by arrival, visits by their last hit,
 * identified users by when they were last seen. Hourly and shortly after start. Conversions are not touched: their
 * own lifecycle (delivery, export, erasure) decides.
 */
export function createRetention(ctx: PluginContext) {
  let first: NodeJS.Timeout | undefined
  let timer: NodeJS.Timeout | undefined
  let running: Promise<RetentionRound[]> | undefined

  async function expireSite(site: ActiveSite, days: number, now: Date): Promise<RetentionRound> {
    const cutoff = new Date(now.getTime() - days * 86_400_000)
    const deleted = { page_events: 0, visits: 0, identified_users: 0 }
    for (const { table, text } of DELETIONS) {
      let gone: number
      do {
        const [row] = await ctx.prepared<{ n: number }>({ name: '', text: `with gone as (${text} returning 1) select count(*)::int as n from gone`, reusePlan: false, timeoutMs: DELETE_STATEMENT_MS }, [site.id, cutoff])
        gone = row?.n ?? 0
        deleted[table] += gone
      } while (gone === BATCH)
    }
    const parts = DELETIONS.filter(({ table }) => deleted[table] > 0).map(({ table, label }) => `${deleted[table]} ${label}`)
    if (parts.length) ctx.logger.info(`capture: retention (${days} days) removed ${parts.join(', ')} of site ${site.id}`)
    return { siteId: site.id, days, deleted }
  }

  /** One round over every site with a retention; rounds never overlap within an instance. */
  function run(now = new Date()): Promise<RetentionRound[]> {
    running ??= (async () => {
      try {
        const rounds: RetentionRound[] = []
        for (const s of ctx.sites.list()) {
          const days = retentionDays(s, ctx.config.capture.retentionDays)
          if (days !== undefined) rounds.push(await expireSite(s, days, now))
        }
        return rounds
      }
      finally {
        running = undefined
      }
    })()
    return running
  }

  const tick = () => void run().catch((error: unknown) => void ctx.hooks.callHook('error', error, { source: 'capture' }))
  return {
    run,
    start() {
      if (!ctx.sites.list().some((s) => retentionDays(s, ctx.config.capture.retentionDays) !== undefined)) return
      first = setTimeout(tick, 60_000).unref() // after start-up, not during it
      timer = setInterval(tick, HOUR_MS).unref()
    },
    stop() {
      clearTimeout(first)
      clearInterval(timer)
    },
  }
}

import type { PluginContext } from '../../core/plugin.ts'
import type { CrmPollerDefinition } from '../../core/registry.ts'
import { releaseHeld } from '../../core/delivery/release.ts'

/** How long one instance holds a poller's turn; a crashed holder's turn is free after it. */
const LEASE_SECONDS = 300

/**
 * Runs every site's CRM pollers on `release.pollIntervalSeconds`, once across instances: a poller's turn is
 * claimed in crm_poll_state (`locked_until`, skip locked), resumed from the stored cursor, and the cursor is only
 * stored after the qualified leads were released, so a crash repeats a window rather than losing one. A rate
 * limit (an error with `retryAfterMs`) moves the next run back.
 */
export function createCrmScheduler(ctx: PluginContext, options: { tickMs?: number } = {}) {
  const sql = <T extends object[]>(text: string, params: unknown[] = []) => ctx.orm.em.getConnection().execute<T>(text, params)
  const interval = ctx.config.release.pollIntervalSeconds
  const cache = {
    get: (key: string) => ctx.storage.getItem<string>(`cache:crm:${key}`),
    set: (key: string, value: string, ttlSeconds: number) => ctx.storage.setItem(`cache:crm:${key}`, value, { ttl: ttlSeconds }),
  }
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined

  const pollers = ctx.sites.list().flatMap((site) => ctx.registry.forSite(site.id, 'crm-poller').map((configured) => ({ site, ...configured })))

  async function runOne(site: (typeof pollers)[number]['site'], definition: CrmPollerDefinition<unknown>, options: unknown): Promise<void> {
    await sql(`insert into crm_poll_state (site_id, poller) values (?, ?) on conflict do nothing`, [site.id, definition.name])
    const [turn] = await sql<{ cursor: string | null }[]>(
      `update crm_poll_state set locked_until = now() + make_interval(secs => ?)
       where site_id = ? and poller = ? and next_run_at <= now() and (locked_until is null or locked_until < now())
       returning cursor`,
      [LEASE_SECONDS, site.id, definition.name],
    )
    if (!turn) return
    const signal = AbortSignal.timeout((LEASE_SECONDS - 30) * 1000)
    try {
      const result = await definition.poll(options, turn.cursor ?? undefined, { fetch, cache, signal, now: () => new Date() })
      let released = 0
      for (const lead of result.qualified) {
        released += (await releaseHeld(ctx, site, lead.eventName, lead.email, ctx.config.release.expireAfterDays)).released.length
      }
      await sql(
        `update crm_poll_state set cursor = coalesce(?, cursor), locked_until = null, last_run_at = now(), last_released = ?, last_error = null,
           next_run_at = now() + make_interval(secs => ?) where site_id = ? and poller = ?`,
        [result.cursor ?? null, released, interval, site.id, definition.name],
      )
      if (released > 0) ctx.logger.info(`release: ${definition.name} qualified ${released} held conversion(s) on site ${site.id}`)
    }
    catch (error) {
      const { retryAfterMs, retryable } = error as { retryAfterMs?: number, retryable?: boolean }
      // A rate limit waits as long as the CRM asks; credentials that need the operator are tried again hourly, not every round.
      const delaySeconds = retryAfterMs ? Math.ceil(retryAfterMs / 1000) : retryable === false ? Math.max(interval, 3600) : interval
      await sql(
        `update crm_poll_state set locked_until = null, last_run_at = now(), last_error = ?, next_run_at = now() + make_interval(secs => ?)
         where site_id = ? and poller = ?`,
        [error instanceof Error ? error.message : String(error), delaySeconds, site.id, definition.name],
      )
      ctx.logger.warn(`release: ${definition.name} on site ${site.id} failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  const tick = () => {
    running ??= (async () => {
      for (const { site, definition, options } of pollers) {
        await runOne(site, definition as CrmPollerDefinition<unknown>, options).catch((error: unknown) => void ctx.hooks.callHook('error', error, { source: `release:${definition.name}` }))
      }
    })().finally(() => {
      running = undefined
    })
    return running
  }

  return {
    /** Runs due pollers now (tests, and the first round at start). */
    tick,
    start() {
      if (pollers.length === 0) return
      void tick()
      // A due check every few seconds: cheap (one claim per poller), and a poller whose next run was moved up starts soon.
      timer = setInterval(() => void tick(), options.tickMs ?? 5000)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}

import type { PluginContext } from '../../core/plugin.ts'
import type { CrmCredentialStore, CrmPollerDefinition } from '../../core/registry.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { RedactedDatabaseError, toLoggable } from '../../core/db/loggable-error.ts'
import { metrics } from '../../core/metrics/registry.ts'
import { createSealedCache } from '../../core/secrets/sealed-cache.ts'
import type { ReleaseOptions } from './options.ts'
import { releaseHeld } from './release-held.ts'
import { claimPollTurn, dropUnconfiguredTokens, failPollTurn, finishPollTurn, freePollTurn, readIssuedToken, readStoredTokens, resealToken, storeIssuedToken } from './queries/poll-state.ts'
import { resealStored } from '../../core/secrets/reseal.ts'

/** Where a CRM's rotated refresh token is kept, sealed with the server secret (core/secrets/keyring.ts). */
const issuedPlace = (siteId: string, poller: string) => `crm_poll_state\u0000${siteId}\u0000${poller}`

/** How long one instance holds a poller's turn; a crashed holder's turn is free after it. */
const LEASE_SECONDS = 300
/** A due check every few seconds: cheap (one claim per poller), and a poller whose next run was moved up starts soon. */
const TICK_MS = 5000

/**
 * Runs every site's CRM pollers on `release.pollIntervalSeconds`, once across instances: a poller's turn is
 * claimed in crm_poll_state (`locked_until`), resumed from the stored cursor, and the cursor is only stored after
 * the qualified leads were released, so a crash repeats a window rather than losing one. A rate limit (an error
 * with `retryAfterMs`) moves the next run back.
 *
 * A job of every instance (scope `instance`), not a cluster job: the per-poller claim already lets one instance poll
 * a CRM at a time, on each site's own cadence, and a poll may take minutes, longer than a cluster job's lease.
 */
export function scheduleCrmPollers(ctx: PluginContext, options: ReleaseOptions): void {
  const pollers = ctx.sites.list().flatMap((site) => ctx.registry.forSite(site.id, 'crm-poller').map((configured) => ({ site, ...configured })))
  if (pollers.length === 0) return
  const cache = createSealedCache(ctx.storage, ctx.keyring, 'cache:crm:')
  const interval = options.pollIntervalSeconds

  async function runOne(site: ActiveSite, definition: CrmPollerDefinition<unknown>, pollerOptions: unknown, closing: AbortSignal): Promise<void> {
    const turn = { siteId: site.id, poller: definition.name }
    const claimed = await claimPollTurn(ctx.prepared, site.id, definition.name, LEASE_SECONDS)
    if (!claimed) return
    const signal = AbortSignal.any([closing, AbortSignal.timeout((LEASE_SECONDS - 30) * 1000)])
    // A token the CRM issued in place of the configured one (rotation) lives in the poller's row: restarts and
    // other instances read the newest one.
    const credentials: CrmCredentialStore = {
      get: async (basis) => {
        const stored = await readIssuedToken(ctx.prepared, site.id, definition.name, basis)
        return stored === null ? null : ctx.keyring.open('platform-credential', stored, issuedPlace(site.id, definition.name)) ?? null
      },
      set: (basis, value) => storeIssuedToken(ctx.prepared, site.id, definition.name, basis, ctx.keyring.seal('platform-credential', value, issuedPlace(site.id, definition.name))),
    }
    try {
      const result = await definition.poll(pollerOptions, claimed.cursor ?? undefined, { fetch, cache, signal, now: () => new Date(), credentials })
      let released = 0
      for (const lead of result.qualified) {
        released += (await releaseHeld(ctx, site, lead.eventName, lead.email, options.expireAfterDays)).released.length
      }
      await finishPollTurn(ctx.prepared, { ...turn, cursor: result.cursor, released, nextInSeconds: interval })
      metrics.crmPolls.inc({ crm: definition.name, outcome: 'ok' })
      if (released > 0) ctx.logger.info(`release: ${definition.name} qualified ${released} held conversion(s) on site ${site.id}`)
    }
    catch (error) {
      // Shutting down: the turn is freed for the next instance, its window polled again, no error recorded.
      if (closing.aborted) return freePollTurn(ctx.prepared, site.id, definition.name)
      const { retryAfterMs, retryable } = error as { retryAfterMs?: number, retryable?: boolean }
      // A rate limit waits as long as the CRM asks; credentials that need the operator are tried again hourly, not every round.
      const nextInSeconds = retryAfterMs ? Math.ceil(retryAfterMs / 1000) : retryable === false ? Math.max(interval, 3600) : interval
      const described = describeFailure(error)
      metrics.crmPolls.inc({ crm: definition.name, outcome: 'failed' })
      await failPollTurn(ctx.prepared, { ...turn, error: described, nextInSeconds })
      ctx.logger.warn(`release: ${definition.name} on site ${site.id} failed: ${described}`)
    }
  }

  ctx.schedule({
    name: 'release:crm-pollers',
    everyMs: TICK_MS,
    scope: 'instance',
    async run(closing) {
      for (const { site, definition, options: pollerOptions } of pollers) {
        if (closing.aborted) return
        await runOne(site, definition as CrmPollerDefinition<unknown>, pollerOptions, closing)
          .catch((error: unknown) => ctx.report(error, { source: `release:${definition.name}` }))
      }
    },
  })
}

/**
 * What crm_poll_state.last_error and the log keep of a failed poll. A poller's own error (CrmPollError: our hint
 * and the CRM's error text about the refusal, with its HTTP status) keeps its message: the operator needs it. Any
 * other error keeps its class and no message, which could quote a value of a lead being released (an email).
 */
function describeFailure(error: unknown): string {
  const { crm, retryable } = error as { crm?: unknown, retryable?: unknown }
  if (error instanceof Error && typeof crm === 'string' && typeof retryable === 'boolean') return error.message
  const loggable = toLoggable(error)
  if (loggable instanceof RedactedDatabaseError) return loggable.message
  return `${error instanceof Error ? error.name : typeof error} (message withheld: it may quote personal data)`
}

/**
 * At start: forgets the refresh tokens CRMs issued to pollers no longer configured (their site or CRM left the
 * config), and seals those stored in clear (before encryption) or under a previous server secret with the current one.
 */
export async function tidyIssuedTokens(ctx: PluginContext): Promise<void> {
  const configured = ctx.sites.list().flatMap((site) => ctx.registry.forSite(site.id, 'crm-poller').map((c) => ({ siteId: site.id, poller: c.definition.name })))
  for (const row of await dropUnconfiguredTokens(ctx.prepared, configured)) {
    ctx.logger.info(`release: deleted the stored ${row.poller} token of site "${row.site_id}": that CRM is no longer configured`)
  }
  const rows = await readStoredTokens(ctx.prepared)
  await resealStored(ctx.keyring, 'platform-credential', rows,
    (row) => ({ place: issuedPlace(row.site_id, row.poller), value: row.issued_token, label: `The stored ${row.poller} token of site "${row.site_id}"` }),
    (row, sealed) => resealToken(ctx.prepared, row.site_id, row.poller, row.issued_token, sealed), ctx.logger)
}

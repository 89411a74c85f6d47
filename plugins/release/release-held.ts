import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { normalizeEmail } from '../../core/identity/normalize.ts'
import { sha256Hex } from '../../core/identity/hash.ts'
import { releaseHeldRows } from './queries/held.ts'

export interface ReleaseResult {
  /** Held conversions released by this call, oldest first. */
  released: string[]
  /** Ad platforms the site delivers to (0: released, nothing to send). */
  platforms: number
}

/**
 * Releases every conversion held on the site for this event and email (the release endpoint, a CRM poller's
 * qualified lead): one statement, which also writes their outbox rows for the delivery worker.
 */
export async function releaseHeld(
  ctx: Pick<PluginContext, 'prepared' | 'registry'>, site: ActiveSite, event: string, email: string, expireAfterDays: number,
): Promise<ReleaseResult> {
  const normalized = normalizeEmail(email)
  const platforms = ctx.registry.forSite(site.id, 'ad-platform').map((c) => c.definition.name)
  if (!normalized) return { released: [], platforms: platforms.length }
  const released = await releaseHeldRows(ctx.prepared, { siteId: site.id, event, email: normalized, emailHash: sha256Hex(normalized), expireAfterDays, platforms })
  return { released, platforms: platforms.length }
}

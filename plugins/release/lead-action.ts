import type { PluginContext } from '../../core/plugin.ts'
import { sha256Hex } from '../../core/identity/hash.ts'
import type { ReleaseOptions } from './options.ts'
import { dropHeld, findHeld, releaseHeldRows } from './queries/held.ts'

/**
 * One held lead released or dropped by a person (the dashboard, through the `held:act` hook). A release goes through
 * the release statement, by the lead's event and email, as a CRM's qualified lead would: the person's other held
 * conversions of that event are released with it. A drop is `dcgate held drop`'s statement.
 */
export function actOnHeldLeads(ctx: PluginContext, options: ReleaseOptions): void {
  ctx.hooks.hook('held:act', async (request) => {
    if (request.action === 'drop') {
      request.outcome = await dropHeld(ctx.prepared, request.siteId, request.conversionId) ? 'dropped' : 'not_held'
      return
    }
    const lead = await findHeld(ctx.prepared, request.siteId, request.conversionId, options.expireAfterDays)
    const emailHash = lead?.email ? sha256Hex(lead.email) : lead?.email_hash
    if (!lead || !emailHash) {
      request.outcome = 'not_held'
      return
    }
    const platforms = ctx.registry.forSite(request.siteId, 'ad-platform').map((c) => c.definition.name)
    // A lead that arrived hashed has no email in clear: the hash alone matches it (held_email '' matches no row).
    const released = await releaseHeldRows(ctx.prepared, {
      siteId: request.siteId, event: lead.event, email: lead.email ?? '', emailHash, expireAfterDays: options.expireAfterDays, platforms,
    })
    request.outcome = released.includes(request.conversionId) ? 'released' : 'not_held'
    request.released = released.length
  })
}

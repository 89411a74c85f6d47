import * as v from 'valibot'
import { apiError } from '../../core/http/errors.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { normalizeEmail } from '../../core/identity/normalize.ts'
import type { ReleaseOptions } from './options.ts'
import { dropHeld, eraseHeld, expireHeld, listHeld } from './queries/held.ts'

const STATES = ['held', 'released', 'dropped', 'expired'] as const

/** "When qualified" events are held here: without this plugin nothing is held. */
export function holdWhenQualified(ctx: PluginContext): void {
  // Synchronous, on the intake's hot path: the pipeline calls this hook for every mapped conversion anyway.
  ctx.hooks.hook('conversion:before-deliver', (decision) => {
    if (decision.release === 'when_qualified') decision.hold = true
  })
}

/**
 * The held conversions of a site (admin API, `dcgate held list|drop`) and the DSAR erase.
 * A dropped lead ("not a fit") is never sent; an expired one can no longer be released.
 */
export function addHeldAdmin(ctx: PluginContext, options: ReleaseOptions): void {
  const knownSite = (id: string) => {
    if (!ctx.sites.byId(id)) throw apiError(404, { message: `Unknown site "${id}"` })
    return id
  }

  ctx.routes.add({
    method: 'GET', path: '/admin/api/sites/:id/held', auth: 'admin', tags: ['Admin'], summary: 'Held conversions of a site',
    params: v.object({ id: v.string() }),
    query: v.object({ status: v.optional(v.picklist(STATES), 'held') }),
    handler: async (_event, { params, query }) => ({
      held: (await listHeld(ctx.prepared, knownSite(params.id), query.status, options.expireAfterDays)).map(isoTimes),
    }),
  })

  ctx.routes.add({
    method: 'POST', path: '/admin/api/sites/:id/held/:conversion/drop', auth: 'admin', tags: ['Admin'], summary: 'Drop a held conversion (not a fit): nothing is sent',
    params: v.object({ id: v.string(), conversion: v.pipe(v.string(), v.uuid('must be a conversion id')) }),
    handler: async (_event, { params }) => {
      if (!await dropHeld(ctx.prepared, knownSite(params.id), params.conversion)) {
        throw apiError(404, { message: `No held conversion ${params.conversion} on site "${params.id}"` })
      }
      return { dropped: params.conversion }
    },
  })

  // A deletion request removes the person's held rows (spec: held → deleted, "held row removed").
  ctx.hooks.hook('dsar:erase', async ({ siteId, email, emailHash }) => {
    await eraseHeld(ctx.prepared, siteId, normalizeEmail(email) ?? email, emailHash)
  })
}

/** Marks held conversions older than the expiry as expired: at start and hourly, on one instance at a time. */
export function scheduleExpiry(ctx: PluginContext, options: ReleaseOptions): void {
  ctx.schedule({ name: 'release:expiry', everyMs: 3_600_000, run: () => expireHeld(ctx.prepared, options.expireAfterDays) })
}

const TIMES = ['created_at', 'resolved_at', 'expires_at'] as const
function isoTimes(row: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...row }
  for (const field of TIMES) if (copy[field] != null) copy[field] = new Date(copy[field] as string).toISOString()
  return copy
}

import * as v from 'valibot'
import { apiError } from '../../core/http/errors.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { normalizeEmail } from '../../core/identity/normalize.ts'

const STATES = ['held', 'released', 'dropped', 'expired'] as const

/**
 * The held conversions of a site (admin API, `dcgate held list|drop`), the daily expiry and the DSAR erase.
 * A dropped lead ("not a fit") is never sent; an expired one can no longer be released.
 */
export function addHeldAdmin(ctx: PluginContext): void {
  const sql = <T extends object[]>(text: string, params: unknown[]) => ctx.orm.em.getConnection().execute<T>(text, params)
  const knownSite = (id: string) => {
    if (!ctx.sites.byId(id)) throw apiError(404, { message: `Unknown site "${id}"` })
    return id
  }

  ctx.routes.add({
    method: 'GET', path: '/admin/api/sites/:id/held', auth: 'admin', tags: ['Admin'], summary: 'Held conversions of a site',
    params: v.object({ id: v.string() }),
    query: v.object({ status: v.optional(v.picklist(STATES), 'held') }),
    handler: async (_event, { params, query }) => ({
      held: (await sql<Record<string, unknown>[]>(
        `select id, message_id, event, standard_event, held_email as email, value, currency, order_id, session_id, state as status,
           created_at, resolved_at, created_at + make_interval(days => ?) as expires_at
         from conversions where site_id = ? and state = ? order by created_at desc, id desc limit 500`,
        [ctx.config.release.expireAfterDays, knownSite(params.id), query.status],
      )).map(isoTimes),
    }),
  })

  ctx.routes.add({
    method: 'POST', path: '/admin/api/sites/:id/held/:conversion/drop', auth: 'admin', tags: ['Admin'], summary: 'Drop a held conversion (not a fit): nothing is sent',
    params: v.object({ id: v.string(), conversion: v.pipe(v.string(), v.uuid('must be a conversion id')) }),
    handler: async (_event, { params }) => {
      const rows = await sql<{ id: string }[]>(
        `update conversions set state = 'dropped', resolved_at = now(), held_email = null, ip = null, user_agent = null
         where site_id = ? and id = ? and state = 'held' returning id`,
        [knownSite(params.id), params.conversion],
      )
      if (rows.length === 0) throw apiError(404, { message: `No held conversion ${params.conversion} on site "${params.id}"` })
      return { dropped: params.conversion }
    },
  })

  // A deletion request removes the person's held rows (spec: held → deleted, "held row removed").
  ctx.hooks.hook('dsar:erase', async ({ siteId, email, emailHash }) => {
    await sql(
      `delete from conversions where site_id = ? and state = 'held' and (held_email = ? or identity ->> 'email' = ?)`,
      [siteId, normalizeEmail(email) ?? email, emailHash],
    )
  })
}

/** Marks held conversions older than the expiry as expired; hourly, and once at start. Safe on several instances. */
export function startExpiry(ctx: PluginContext): () => void {
  const expire = () => ctx.orm.em.getConnection().execute(
    `update conversions set state = 'expired', resolved_at = now(), held_email = null, ip = null, user_agent = null
     where state = 'held' and created_at <= now() - make_interval(days => ?)`,
    [ctx.config.release.expireAfterDays],
  ).catch((error: unknown) => void ctx.hooks.callHook('error', error, { source: 'release:expiry' }))
  void expire()
  const timer = setInterval(() => void expire(), 3_600_000)
  timer.unref()
  return () => clearInterval(timer)
}

const TIMES = ['created_at', 'resolved_at', 'expires_at'] as const
function isoTimes(row: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...row }
  for (const field of TIMES) if (copy[field] != null) copy[field] = new Date(copy[field] as string).toISOString()
  return copy
}

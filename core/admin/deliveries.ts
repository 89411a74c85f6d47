import * as v from 'valibot'
import type { MikroORM } from '@mikro-orm/postgresql'
import { apiError } from '../http/errors.ts'
import type { RouteTable } from '../http/routes.ts'
import type { SiteDirectory } from '../sites/directory.ts'

const STATUSES = ['pending', 'retrying', 'sent', 'failed', 'skipped'] as const

/**
 * What the export of validated conversions reports for each delivery, kept on the conversion row. `has_consent` is
 * true only for an explicit grant from the visitor's consent banner; a server-side conversion with no matched visit
 * has no consent signal (false), and a denied one is never delivered.
 */
const EXPORT_FIELDS = `c.source, c.source_event_type, c.confirmation, c.order_id, c.value, c.currency, c.country,
  c.consent = 'granted' as has_consent, c.session_id, c.user_id, c.content_name, c.content_category`
const tags = ['Admin']

/** The delivery report: one row per conversion per platform, newest first; and replay of failed ones. */
export function installDeliveryRoutes(routes: RouteTable, orm: MikroORM, sites: SiteDirectory): void {
  const sql = <T extends object[]>(text: string, params: unknown[]) => orm.em.getConnection().execute<T>(text, params)
  const knownSite = (id: string) => {
    if (!sites.byId(id)) throw apiError(404, { message: `Unknown site "${id}"; configured sites: ${sites.list().map((s) => s.id).join(', ') || '(none)'}` })
    return id
  }

  routes.add({
    method: 'GET', path: '/admin/api/sites/:id/deliveries', auth: 'admin', tags, summary: 'Delivery report',
    params: v.object({ id: v.string() }),
    query: v.object({
      status: v.optional(v.picklist(STATUSES)),
      limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(1), v.maxValue(1000)), '100'),
    }),
    handler: async (_event, { params, query }) => ({
      deliveries: (await sql<Record<string, unknown>[]>(
        `select d.id, d.id as delivery_id, c.message_id, c.event, c.standard_event, d.provider, d.status, d.attempts, d.http_status, d.error,
           d.last_duration_ms, d.next_attempt_at, d.sent_at, d.created_at, d.updated_at,
           ${EXPORT_FIELDS}
         from deliveries d join conversions c on c.id = d.conversion_id
         where d.site_id = ?${query.status ? ' and d.status = ?' : ''} order by d.created_at desc, d.id desc limit ?`,
        [knownSite(params.id), ...(query.status ? [query.status] : []), query.limit],
      )).map(withIsoTimes),
    }),
  })

  routes.add({
    method: 'POST', path: '/admin/api/sites/:id/deliveries/retry', auth: 'admin', tags, summary: 'Replay failed deliveries (one by id, or all failed)',
    params: v.object({ id: v.string() }),
    body: v.object({ id: v.optional(v.pipe(v.string(), v.uuid('must be a delivery id'))), failed: v.optional(v.literal(true)) }),
    handler: async (_event, { params, body }) => {
      if (!body.id === !body.failed) throw apiError(400, { message: 'Give either a delivery id or failed: true' })
      const rows = await sql<{ id: string }[]>(
        `update deliveries set status = 'retrying', attempts = 0, next_attempt_at = now(), locked_until = null, updated_at = now()
         where site_id = ? and status = 'failed'${body.id ? ' and id = ?' : ''} returning id`,
        [knownSite(params.id), ...(body.id ? [body.id] : [])],
      )
      if (body.id && rows.length === 0) throw apiError(404, { message: `No failed delivery ${body.id} for site "${params.id}"` })
      return { requeued: rows.map((r) => r.id) }
    },
  })
}

const TIME_FIELDS = ['next_attempt_at', 'sent_at', 'created_at', 'updated_at'] as const

/** Timestamps as ISO 8601, like the rest of the admin API (the driver hands back PostgreSQL's text form). */
function withIsoTimes(row: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...row }
  for (const field of TIME_FIELDS) if (copy[field] != null) copy[field] = new Date(copy[field] as string).toISOString()
  return copy
}

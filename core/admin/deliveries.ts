import * as v from 'valibot'
import type { RunPrepared } from '../db/prepared.ts'
import { apiError } from '../http/errors.ts'
import type { RouteTable } from '../http/routes.ts'
import type { SiteDirectory } from '../sites/directory.ts'
import { listDeliveries, requeueFailed } from '../delivery/queries/report.ts'

const STATUSES = ['pending', 'retrying', 'sent', 'failed', 'skipped'] as const

const tags = ['Admin']

/** The delivery report: one row per conversion per platform, newest first; and replay of failed ones. */
export function installDeliveryRoutes(routes: RouteTable, prepared: RunPrepared, sites: SiteDirectory, retryWindowDays: number): void {
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
      deliveries: (await listDeliveries(prepared, knownSite(params.id), query.status, query.limit)).map(withIsoTimes),
    }),
  })

  routes.add({
    method: 'POST', path: '/admin/api/sites/:id/deliveries/retry', auth: 'admin', tags, summary: 'Replay failed deliveries (one by id, or all failed); 409 for one past delivery.retryWindowDays',
    params: v.object({ id: v.string() }),
    body: v.object({ id: v.optional(v.pipe(v.string(), v.uuid('must be a delivery id'))), failed: v.optional(v.literal(true)) }),
    handler: async (_event, { params, body }) => {
      if (!body.id === !body.failed) throw apiError(400, { message: 'Give either a delivery id or failed: true' })
      const { requeued, refused } = await requeueFailed(prepared, knownSite(params.id), body.id, {}, retryWindowDays)
      // Past the retry window the conversion lacks what the first attempt sent: refused, with the reason.
      if (body.id && refused.length) throw apiError(409, { message: refused[0]!.reason })
      if (body.id && requeued.length === 0) throw apiError(404, { message: `No failed delivery ${body.id} for site "${params.id}"` })
      return refused.length ? { requeued, refused } : { requeued }
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

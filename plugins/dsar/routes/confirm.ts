import * as v from 'valibot'
import type { PluginContext } from '../../../core/plugin.ts'
import type { Dsar } from '../service.ts'
import { renderInvalidLinkPage } from '../status-page.ts'
import { html } from './proof.ts'

/**
 * GET /public/dsar/confirm?token=: the link in the confirmation mail. The first open runs the erasure
 * (received → processing → completed) and lands on the status page; later opens only show the status. Only the
 * token's hash is stored, so the link cannot be rebuilt from the database.
 */
export function addConfirmRoute(ctx: PluginContext, dsar: Dsar): void {
  ctx.routes.add({
    method: 'GET',
    path: '/public/dsar/confirm',
    auth: 'none',
    summary: 'Confirm a deletion request (the emailed link)',
    description: 'The first open erases the data and redirects (303) to the status page; later opens redirect without erasing. An unknown or purged link answers an HTML page with 404.',
    tags: ['Data deletion'],
    query: v.looseObject({ token: v.optional(v.string()) }),
    handler: async (event, { query }) => {
      const row = query.token && query.token.length <= 128 ? await dsar.store.byToken(query.token) : undefined
      if (!row) return html(event, 404, renderInvalidLinkPage())
      if (row.status !== 'completed') await dsar.erase(row.id, 'confirmed')
      event.res.status = 303
      event.res.headers.set('location', dsar.statusUrl(row.code))
      event.res.headers.set('cache-control', 'no-store')
      event.res.headers.set('referrer-policy', 'no-referrer')
      return null
    },
  })
}

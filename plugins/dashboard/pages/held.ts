/**
 * Held leads: conversions of "when qualified" events waiting for a CRM's word, newest first. Release sends a lead (with
 * the person's other held conversions of the same event, as a release by the CRM would); Not a fit drops it, never
 * sent. Both go to the release plugin through the `held:act` hook (plugins may not import each other).
 */
import type { HeldLeadAction } from '../../../core/hooks.ts'
import { maskEmailDistinct } from '../../../core/mail/mask.ts'
import { csrfField, html, time, type Html } from '../html.ts'
import { actionError, definePage, type ActionContext, type ActionResult, type PageContext } from '../page.ts'
import { listHeldPage, type HeldLeadRow } from '../queries/held.ts'
import { readCursor, splitPage } from '../queries/paging.ts'
import { pager } from './pager.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The release plugin's default expiry, for a server that runs without it (nothing is held then anyway). */
const DEFAULT_EXPIRE_AFTER_DAYS = 30

export const heldPage = definePage({
  slug: 'held', nav: 'Held leads',
  async render(ctx) {
    const expireAfterDays = ctx.plugin.config.release?.expireAfterDays ?? DEFAULT_EXPIRE_AFTER_DAYS
    const before = ctx.query.get('before') ?? undefined
    const page = splitPage(await listHeldPage(ctx.plugin.prepared, ctx.site.id, readCursor(before), expireAfterDays))
    return {
      title: 'Held leads',
      body: html`<h1>Held leads</h1>
<p class="muted">Conversions of events set to <code>release: 'when_qualified'</code> wait here until your CRM calls them qualified, for
${expireAfterDays} days at most. Release sends a lead now; Not a fit drops it for good.</p>
${page.rows.length ? heldTable(ctx, page.rows) : html`<p>No lead is waiting.</p>`}
${pager(ctx, 'held', before, page.older)}`,
    }
  },
  actions: {
    release: (ctx) => act(ctx, 'release'),
    'not-a-fit': (ctx) => act(ctx, 'drop'),
  },
})

async function act(ctx: ActionContext, action: HeldLeadAction['action']): Promise<ActionResult> {
  const conversionId = ctx.form.get('id') ?? ''
  if (!UUID.test(conversionId)) throw actionError(400, 'id: not a lead id')
  const request: HeldLeadAction = { siteId: ctx.site.id, conversionId, action }
  await ctx.plugin.hooks.callHook('held:act', request)
  if (!request.outcome) throw actionError(409, 'Held leads are handled by the release plugin, which this server does not run.')
  if (request.outcome === 'not_held') throw actionError(404, 'That lead is no longer held (released, dropped or expired meanwhile).')
  const released = request.released ?? 1
  return {
    audit: { action: action === 'release' ? 'held.release' : 'held.not-a-fit', detail: conversionId },
    flash: {
      text: action === 'drop'
        ? 'The lead was dropped as not a fit: it will not be sent.'
        : released > 1 ? `Released ${released} held conversions of this person and event; they are sent within seconds.` : 'The lead was released; it is sent within seconds.',
    },
  }
}

function clickIds(row: HeldLeadRow): Html {
  return row.click_ids.length ? html`${row.click_ids.join(', ')}` : html`<span class="muted">none</span>`
}

function email(row: HeldLeadRow): Html {
  if (row.email) return html`${maskEmailDistinct(row.email)}`
  return html`<span class="muted">${row.has_email_hash ? 'hashed' : 'none'}</span>`
}

function heldTable(ctx: PageContext, rows: readonly HeldLeadRow[]): Html {
  const button = (action: string, label: string, row: HeldLeadRow, style: string) => html`<form method="post" action="${ctx.href('held', action)}" class="inline">${csrfField(ctx.csrf)}
<input type="hidden" name="id" value="${row.id}"><button type="submit" class="button small ${style}">${label}</button></form>`
  return html`<div class="table-wrap"><table><caption>Held leads, newest first</caption><thead><tr>
<th scope="col">Captured</th><th scope="col">Event</th><th scope="col">Email</th><th scope="col">Click ids</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows.map((row) => html`<tr><td>${time(row.paging_time)}</td><td>${row.event}</td><td>${email(row)}</td><td>${clickIds(row)}</td>
<td class="row-actions">${button('release', 'Release', row, '')}${button('not-a-fit', 'Not a fit', row, 'secondary')}</td></tr>`)}</tbody></table></div>`
}

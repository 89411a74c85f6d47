/**
 * Deliveries: the delivery report per site. A GET form filters by platform, status, event and day; the table pages
 * newest first, 50 at a time; `?id=` opens one delivery (deliveries-detail.ts). Retry sets failed deliveries due
 * again with the admin API's replay (core/delivery/queries/report.ts), one or every failed one in the filter.
 */
import { requeueFailed } from '../../../core/delivery/queries/report.ts'
import { csrfField, html, time, type Html } from '../html.ts'
import { actionError, definePage, type ActionContext, type PageContext } from '../page.ts'
import { listDeliveryPage, type DeliveryListRow } from '../queries/deliveries.ts'
import { readCursor, splitPage } from '../queries/paging.ts'
import { renderDeliveryDetail } from './deliveries-detail.ts'
import { pager } from './pager.ts'
import { filterQuery, readFilter, STATUSES, type FilterFields } from './deliveries-filter.ts'
import { eventLabel, filterFields, reasonCell, retryForm, statusBadge, valueText } from './deliveries-parts.ts'
import { platformLabel } from '../platforms.ts'
import { orderLink, renderOrderTimeline } from './order-timeline.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const deliveriesPage = definePage({
  slug: 'deliveries', nav: 'Deliveries',
  async render(ctx) {
    const read = readFilter(ctx.query)
    const id = ctx.query.get('id')
    if (id !== null) return renderDeliveryDetail(ctx, id, read.fields)
    const order = ctx.query.get('order')
    if (order !== null) return renderOrderTimeline(ctx, order)
    if ('problem' in read) {
      return { title: 'Deliveries', status: 400, body: html`<h1>Deliveries</h1>${filterForm(ctx, read.fields)}<p class="flash error" role="alert">${read.problem}</p>` }
    }
    const page = splitPage(await listDeliveryPage(ctx.plugin.prepared, ctx.site.id, read.filter, readCursor(ctx.query.get('before') ?? undefined)))
    return {
      title: 'Deliveries',
      body: html`<h1>Deliveries</h1>${filterForm(ctx, read.fields)}
${retryAllForm(ctx, read.fields)}
${page.rows.length ? deliveryTable(ctx, page.rows, read.fields) : html`<p>No delivery matches this filter.</p>`}
${pager(ctx, 'deliveries', ctx.query.get('before') ?? undefined, page.older, filterQuery(read.fields))}`,
    }
  },
  actions: {
    /** One failed delivery due again. */
    async retry(ctx) {
      const id = ctx.form.get('id') ?? ''
      if (!UUID.test(id)) throw actionError(400, 'id: not a delivery id')
      const { requeued: [requeued], refused: [refused] } = await requeueFailed(ctx.plugin.prepared, ctx.site.id, id, {}, ctx.plugin.config.delivery.retryWindowDays)
      if (refused) throw actionError(409, `${refused.reason[0]!.toUpperCase()}${refused.reason.slice(1)}.`)
      if (!requeued) throw actionError(404, 'That delivery is not failed (any more): only a failed delivery can be retried.')
      return { audit: { action: 'delivery.retry', detail: id }, flash: { text: 'The delivery is due again; the worker sends it within seconds.' }, query: backQuery(ctx) }
    },
    /** Every failed delivery the filter shows (its status field aside: only failed ones are retried). */
    async 'retry-failed'(ctx) {
      const read = readFilter(ctx.form)
      if ('problem' in read) throw actionError(400, read.problem)
      const { provider, event, from, to } = read.filter
      const { requeued, refused } = await requeueFailed(ctx.plugin.prepared, ctx.site.id, undefined, { provider, event, from, to }, ctx.plugin.config.delivery.retryWindowDays)
      const what = filterQuery({ ...read.fields, status: '' }) || 'no filter'
      const due = requeued.length ? `${requeued.length} failed ${requeued.length === 1 ? 'delivery is' : 'deliveries are'} due again.` : 'No failed delivery matched the filter.'
      const past = refused.length ? ` ${refused.length} older than ${ctx.plugin.config.delivery.retryWindowDays} days ${refused.length === 1 ? 'was' : 'were'} not retried: their conversions' IP address and user agent were erased.` : ''
      return {
        audit: { action: 'delivery.retry-failed', detail: `${requeued.length} deliveries (${what})` },
        flash: { text: refused.length && !requeued.length ? `No failed delivery is due again.${past}` : `${due}${past}` },
        query: filterQuery(read.fields),
      }
    },
  },
})

/** The filter the action's form came from, so the browser goes back to the same view. */
function backQuery(ctx: ActionContext): string {
  return filterQuery(readFilter(ctx.form).fields, ctx.form.get('back') === 'detail' ? { id: ctx.form.get('id') ?? '' } : {})
}

function filterForm(ctx: PageContext, fields: FilterFields): Html {
  const platforms = ctx.plugin.registry.forSite(ctx.site.id, 'ad-platform').map((c) => c.definition.name)
  const option = (value: string, label: string, selected: string) => html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`
  return html`<form method="get" action="${ctx.href('deliveries')}" class="row filters" role="search" aria-label="Filter deliveries">
<label>Platform <select name="platform">${option('', 'All platforms', fields.platform)}${[...new Set([...platforms, ...(fields.platform ? [fields.platform] : [])])].map((p) => option(p, platformLabel(ctx.plugin, ctx.site.id, p), fields.platform))}</select></label>
<label>Status <select name="status">${option('', 'Any status', fields.status)}${STATUSES.map((s) => option(s, s, fields.status))}</select></label>
<label>Event <input type="text" name="event" value="${fields.event}" maxlength="255" list="site-events"></label>
<datalist id="site-events">${ctx.site.config.events.map((e) => html`<option value="${e.key}">`)}</datalist>
<label>From <input type="date" name="from" value="${fields.from}"></label>
<label>To <input type="date" name="to" value="${fields.to}"></label>
<button type="submit" class="button">Filter</button></form>`
}

function retryAllForm(ctx: PageContext, fields: FilterFields): Html {
  if (fields.status && fields.status !== 'failed') return html``
  return html`<form method="post" action="${ctx.href('deliveries', 'retry-failed')}" class="inline">${csrfField(ctx.csrf)}${filterFields(fields)}
<button type="submit" class="button secondary">Retry every failed delivery in this filter</button></form>`
}

function deliveryTable(ctx: PageContext, rows: readonly DeliveryListRow[], fields: FilterFields): Html {
  return html`<div class="table-wrap"><table><caption>Deliveries, newest first</caption><thead><tr>
<th scope="col">Created</th><th scope="col">Event</th><th scope="col">Order id</th><th scope="col">Value</th><th scope="col">Platform</th><th scope="col">Status</th>
<th scope="col">HTTP status</th><th scope="col">Attempts</th><th scope="col">Reason</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows.map((row) => html`<tr>
<td>${time(row.paging_time)}</td><td>${eventLabel(row)}</td><td>${row.order_id === null ? html`<span class="muted">–</span>` : orderLink(ctx, row.order_id)}</td>
<td class="nowrap">${valueText(row)}</td><td>${platformLabel(ctx.plugin, ctx.site.id, row.provider)}</td>
<td>${statusBadge(row.status)}</td><td>${row.http_status ?? html`<span class="muted">–</span>`}</td><td>${row.attempts}</td>
${reasonCell(row)}
<td class="row-actions"><a href="${ctx.href('deliveries')}?${filterQuery(fields, { id: row.id })}">Details<span class="visually-hidden"> of the ${platformLabel(ctx.plugin, ctx.site.id, row.provider)} delivery of ${row.event}</span></a>
${row.status === 'failed' ? retryForm(ctx, row.id, fields) : ''}</td></tr>`)}</tbody></table></div>`
}

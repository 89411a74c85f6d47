/**
 * Live events: the last requests that reached the site (tracking hits, identifies, conversions, Segment messages,
 * webhooks), refused ones with their status, code and reason, newest first, filtered by kind and outcome. Shown: the
 * route pattern (never the path, which holds keys), a webhook's source name, the answer's status and message (which
 * name fields, never values). Recorded by ../live/recorder.ts.
 */
import { html, time, type Html } from '../html.ts'
import { definePage, type PageContext } from '../page.ts'
import { listLive, type ShownLive } from '../queries/live.ts'
import { LIVE_KINDS, kindLabel } from '../live/kinds.ts'
import { liveRecorderOf } from '../live/recorder.ts'

/** Rows shown at once: the newest of the few hundred kept per site. */
const SHOWN = 200
const OUTCOMES = [{ key: 'accepted', label: 'Accepted' }, { key: 'refused', label: 'Refused' }] as const

export const livePage = definePage({
  slug: 'live', nav: 'Live events',
  async render(ctx) {
    const kind = LIVE_KINDS.some((k) => k.key === ctx.query.get('kind')) ? ctx.query.get('kind')! : ''
    const outcome = OUTCOMES.some((o) => o.key === ctx.query.get('outcome')) ? ctx.query.get('outcome')! : ''
    // This instance's last requests first (the others write theirs within a second).
    await liveRecorderOf(ctx.plugin)?.flush()
    const rows = await listLive(ctx.plugin.prepared, ctx.site.id, { kind, outcome }, SHOWN)
    return {
      title: 'Live events',
      body: html`<h1>Live events</h1>
<p class="muted">The last requests that reached ${ctx.site.name}, refused ones with the answer's reason. The newest ${SHOWN} are shown; reload to see new ones.
Nothing personal is kept here: the route, the status and the reason the client was given.</p>
${filterForm(ctx, kind, outcome)}
${rows.length ? liveTable(rows) : html`<p>No request${kind || outcome ? ' matches this filter' : ' has reached this site lately'}.</p>`}`,
    }
  },
})

function filterForm(ctx: PageContext, kind: string, outcome: string): Html {
  const option = (value: string, label: string, selected: string) => html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`
  return html`<form method="get" action="${ctx.href('live')}" class="row filters" role="search" aria-label="Filter live events">
<label>Kind <select name="kind">${option('', 'Every kind', kind)}${LIVE_KINDS.map((k) => option(k.key, k.label, kind))}</select></label>
<label>Outcome <select name="outcome">${option('', 'Any outcome', outcome)}${OUTCOMES.map((o) => option(o.key, o.label, outcome))}</select></label>
<button type="submit" class="button">Filter</button></form>`
}

function liveTable(rows: readonly ShownLive[]): Html {
  return html`<div class="table-wrap"><table><caption>Requests, newest first</caption><thead><tr>
<th scope="col">When</th><th scope="col">Kind</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Outcome</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows.map((row) => html`<tr><td>${time(row.at)}</td><td>${kindLabel(row.kind)}</td>
<td><code>${row.method} ${row.route}</code>${row.source ? html` <span class="muted">(${row.source})</span>` : ''}</td>
<td>${row.status}</td><td>${outcomeBadge(row)}</td>
<td${row.reason ? html` class="reason"` : ''}>${row.code ? html`<code>${row.code}</code> ` : ''}${row.reason ?? ''}</td></tr>`)}</tbody></table></div>`
}

function outcomeBadge(row: ShownLive): Html {
  if (row.status >= 400) return html`<span class="badge error">refused</span>`
  if (row.refused) return html`<span class="badge error">partly refused</span>`
  return html`<span class="badge ok">accepted</span>`
}

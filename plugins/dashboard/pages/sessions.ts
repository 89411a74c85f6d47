/** Sessions: visits newest first, with the bot verdict and the VPN, proxy and Tor verdicts of their network. */
import { html, time, type Html } from '../html.ts'
import { definePage } from '../page.ts'
import { readCursor, splitPage } from '../queries/paging.ts'
import { listSessionsPage, type SessionRow } from '../queries/sessions.ts'
import { pager } from './pager.ts'

export const sessionsPage = definePage({
  slug: 'sessions', nav: 'Sessions',
  async render(ctx) {
    const before = ctx.query.get('before') ?? undefined
    const page = splitPage(await listSessionsPage(ctx.plugin.prepared, ctx.site.id, readCursor(before)))
    return {
      title: 'Sessions',
      body: html`<h1>Sessions</h1>
${page.rows.length ? sessionsTable(page.rows) : html`<p>No visit recorded yet.</p>`}
${pager(ctx, 'sessions', before, page.older)}`,
    }
  },
})

const none = html`<span class="muted">–</span>`

function network(row: SessionRow): string {
  const flags = [row.is_vpn && 'VPN', row.is_proxy && 'proxy', row.is_tor && 'Tor'].filter(Boolean)
  return flags.length ? flags.join(', ') : 'none'
}

function bot(row: SessionRow): string {
  if (!row.is_bot) return 'no'
  return row.bot_reasons?.length ? `yes (${row.bot_reasons.join(', ')})` : 'yes'
}

/** A URL's path only: the query string may carry an email or a token a form put there. */
function pathOf(url: string | null): Html | string {
  if (!url) return none
  try {
    const parsed = new URL(url)
    return `${parsed.host}${parsed.pathname}`
  }
  catch {
    return none
  }
}

function duration(ms: number | null): string {
  if (ms === null) return ''
  const seconds = Math.round(ms / 1000)
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`
}

function sessionsTable(rows: readonly SessionRow[]): Html {
  return html`<div class="table-wrap"><table class="sessions"><caption>Sessions, newest first</caption><thead><tr>
<th scope="col">Started</th><th scope="col">Duration</th><th scope="col">Pages</th><th scope="col">Landing page</th><th scope="col">Referrer</th>
<th scope="col">Country</th><th scope="col">Device</th><th scope="col">Bot</th><th scope="col">VPN / proxy / Tor</th></tr></thead>
<tbody>${rows.map((row) => html`<tr><td>${time(row.paging_time)}</td><td>${duration(row.duration_ms)}</td><td>${row.page_count}</td>
<td class="url">${pathOf(row.landing_url)}</td><td class="url">${pathOf(row.referrer)}</td><td>${row.country ?? none}</td><td>${row.platform ?? none}</td>
<td>${bot(row)}</td><td>${network(row)}</td></tr>`)}</tbody></table></div>`
}

/** Identified users: people the site identified by email, newest first, with their risk and network verdicts. */
import { maskEmailDistinct } from '../../../core/mail/mask.ts'
import { html, time, type Html } from '../html.ts'
import { definePage } from '../page.ts'
import { pager } from './pager.ts'
import { readCursor, splitPage } from '../queries/paging.ts'
import { listUsersPage, type IdentifiedUserRow } from '../queries/users.ts'

export const usersPage = definePage({
  slug: 'users', nav: 'Identified users',
  async render(ctx) {
    const before = ctx.query.get('before') ?? undefined
    const page = splitPage(await listUsersPage(ctx.plugin.prepared, ctx.site.id, readCursor(before)))
    return {
      title: 'Identified users',
      body: html`<h1>Identified users</h1>
<p class="muted">Emails are masked here; the export of identified users lists them in full for your systems.</p>
${page.rows.length ? usersTable(page.rows) : html`<p>No one identified yet.</p>`}
${pager(ctx, 'users', before, page.older)}`,
    }
  },
})

const none = html`<span class="muted">–</span>`

function risk(row: IdentifiedUserRow): Html {
  if (row.email_risk_score === null) return none
  return html`${row.email_risk_label ?? ''} (${row.email_risk_score})${row.is_disposable ? ', disposable' : ''}`
}

function usersTable(rows: readonly IdentifiedUserRow[]): Html {
  return html`<div class="table-wrap"><table><caption>Identified users, newest first</caption><thead><tr>
<th scope="col">Identified</th><th scope="col">Email</th><th scope="col">Source</th><th scope="col">Email risk</th><th scope="col">Country</th>
<th scope="col">VPN</th><th scope="col">Last seen</th></tr></thead>
<tbody>${rows.map((row) => html`<tr><td>${time(row.paging_time)}</td><td>${maskEmailDistinct(row.email)}</td><td>${row.source}</td><td>${risk(row)}</td>
<td>${row.ip_country ?? none}</td><td>${row.ip_is_vpn ? 'yes' : 'no'}</td><td>${time(row.last_seen_at)}</td></tr>`)}</tbody></table></div>`
}

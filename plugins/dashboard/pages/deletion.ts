import { html, time } from '../html.ts'
import { definePage } from '../page.ts'
import { listDeletionRequests } from '../queries/deletion.ts'
import { publicBaseUrl } from '../urls.ts'

const PAGE_SIZE = 50
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const STATUS_BADGE: Record<string, string> = { completed: 'ok', processing: '', received: '' }

/** The site's data deletion requests (plugins/dsar), newest first: status, masked email, dates and the proof page. */
export const deletionPage = definePage({
  slug: 'deletion',
  nav: 'Data deletion',
  async render({ site, plugin, query, href }) {
    const before = cursor(query.get('before'))
    const rows = await listDeletionRequests(plugin.prepared, site.id, PAGE_SIZE + 1, before)
    const shown = rows.slice(0, PAGE_SIZE)
    const last = shown.at(-1)
    const base = publicBaseUrl(plugin.config, 'status')
    const older = rows.length > PAGE_SIZE && last ? `${href('deletion')}?before=${encodeURIComponent(`${new Date(last.received_at).toISOString()}|${last.id}`)}` : undefined
    return {
      title: 'Data deletion',
      body: html`<h1>Data deletion</h1>
<p class="hint">Requests to erase one person's data at ${site.name}${site.config.deletion.enabled ? '' : ' (deletion is turned off for this site)'}. The address is shown masked; the proof page is public to whoever has its code.</p>
${shown.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Status</th><th scope="col">Email</th><th scope="col">Source</th><th scope="col">Received</th><th scope="col">Completed</th><th scope="col">Purge</th><th scope="col">Proof</th></tr></thead><tbody>${
      shown.map((row) => html`<tr><td><span class="badge ${STATUS_BADGE[row.status] ?? ''}">${row.status}</span></td><td>${row.masked_email}</td><td>${row.source}</td><td>${time(row.received_at)}</td><td>${time(row.completed_at)}</td>
<td>${row.purged_at ? html`purged ${time(row.purged_at)}` : html`due ${time(row.hard_purge_at)}`}</td><td><a href="${base}/public/dsar/status/${encodeURIComponent(row.code)}">Proof</a></td></tr>`)}</tbody></table></div>`
    : html`<p>No deletion request${before ? ' before these' : ' yet'}.</p>`}
${older ? html`<p><a href="${older}">Older requests</a></p>` : ''}`,
    }
  },
})

/** `?before=<ISO time>|<id>`, the last row of the previous page; anything else starts from the newest. */
function cursor(value: string | null): { at: string, id: string } | undefined {
  const [at, id] = (value ?? '').split('|')
  if (!at || !id || !UUID.test(id) || Number.isNaN(Date.parse(at))) return undefined
  return { at, id }
}

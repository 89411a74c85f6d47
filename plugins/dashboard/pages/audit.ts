import { html, time } from '../html.ts'
import { definePage } from '../page.ts'
import { listAudit } from '../queries/audit.ts'

const SHOWN = 200

/** Every dashboard action on this site (who, what, when), newest first; the operator also sees sign-ins and sign-outs. */
export const auditPage = definePage({
  slug: 'audit',
  nav: 'Audit log',
  async render({ site, plugin, viewer }) {
    const rows = await listAudit(plugin.prepared, site.id, viewer.kind === 'operator', SHOWN)
    return {
      title: 'Audit log',
      body: html`<h1>Audit log</h1>
<p class="hint">The last ${SHOWN} dashboard actions on ${site.name}${viewer.kind === 'operator' ? ', with every sign-in' : ''}.</p>
${rows.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead><tbody>${
      rows.map((row) => html`<tr><td>${time(row.created_at)}</td><td>${row.actor}</td><td>${row.action}</td><td>${row.detail ?? ''}</td></tr>`)}</tbody></table></div>`
    : html`<p>Nothing yet.</p>`}`,
    }
  },
})

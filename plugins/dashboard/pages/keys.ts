import { csrfField, html, time } from '../html.ts'
import { actionError, definePage } from '../page.ts'

const PREFIX = /^dcp_[\w-]{8}$/

/**
 * The site's private keys: name, the 12-character prefix, created, last used. "Create key" shows the new key once
 * (flash, with a copy button); "Delete key" asks first (GET ?confirm=<prefix>), then deletes through the admin API,
 * which revokes the key on every instance at once.
 */
export const keysPage = definePage({
  slug: 'keys',
  nav: 'Keys',
  async render({ site, admin, query, csrf, href }) {
    const keys = await admin.listKeys(site.id)
    const confirming = keys.find((key) => key.prefix === query.get('confirm'))
    const confirm = confirming
      ? html`<div class="card" role="alertdialog" aria-labelledby="confirm-title">
<h2 id="confirm-title">Delete key “${confirming.name}” (${confirming.prefix}…)?</h2>
<p>Anything that still sends it gets 401 at once. This cannot be undone.</p>
<div class="actions"><form method="post" action="${href('keys', 'delete')}">${csrfField(csrf)}<input type="hidden" name="prefix" value="${confirming.prefix}">
<button type="submit" class="button danger">Delete key</button></form><a class="button secondary" href="${href('keys')}">Cancel</a></div></div>`
      : ''
    const rows = keys.map((key) => html`<tr><td>${key.name}</td><td><code>${key.prefix}</code></td><td>${time(key.created_at)}</td><td>${time(key.last_used_at)}</td>
<td><form method="get" action="${href('keys')}"><input type="hidden" name="confirm" value="${key.prefix}"><button type="submit" class="button secondary">Delete key</button></form></td></tr>`)
    return {
      title: 'Keys',
      body: html`<h1>Keys</h1>
<p class="hint">Private keys (<code>x-dc-key</code>) for ${site.name}'s servers and automation tools. Only their first 12 characters are kept in clear.</p>
${confirm}
<div class="card"><h2>Create a key</h2>
<form method="post" action="${href('keys', 'create')}" class="row">${csrfField(csrf)}
<label>Name<input type="text" name="name" required maxlength="200" placeholder="e.g. zapier"></label>
<button type="submit" class="button">Create key</button></form></div>
${keys.length
    ? html`<div class="table-wrap"><table><caption class="visually-hidden">Keys</caption><thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p>No key yet.</p>`}`,
    }
  },
  actions: {
    async create({ site, admin, form }) {
      const name = (form.get('name') ?? '').trim()
      if (!name) throw actionError(400, 'Give the key a name.')
      if (name.length > 200) throw actionError(400, 'A key name has at most 200 characters.')
      const created = await admin.createKey(site.id, name)
      return {
        audit: { action: 'created key', detail: `${created.name} (${created.prefix})` },
        flash: { text: `Key “${created.name}” created. Copy it now: it is shown in full only this once.`, secret: created.key },
      }
    },
    async delete({ site, admin, form }) {
      const prefix = form.get('prefix') ?? ''
      if (!PREFIX.test(prefix) || !(await admin.deleteKey(site.id, prefix))) throw actionError(404, 'This site has no such key (already deleted?).')
      return { audit: { action: 'deleted key', detail: prefix }, flash: { text: `Key ${prefix}… deleted; it stops working at once.` } }
    },
  },
})

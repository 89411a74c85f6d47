import type { SiteConfig } from '../../../core/config/schema.ts'
import { html, type Html } from '../html.ts'

/**
 * A site's settings as text (no field to change): a config-file site's, which the dashboard never edits, or a
 * dashboard site's for a member who may not edit. Option values are left out: they may be tokens.
 */
export function readOnlySettings(site: SiteConfig, fromConfigFile = true): Html {
  const list = (items: readonly string[]) => (items.length ? items.join(', ') : html`<span class="muted">none</span>`)
  const events = site.events.map((e) => `${e.key} (${e.name}${e.sendsAs ? `, sent as ${e.sendsAs}` : ''}${e.release === 'when_qualified' ? ', held until qualified' : ''})`)
  return html`${fromConfigFile ? html`<h1>Settings</h1><p class="notice" role="note">This site is managed in the config file (read-only here): change it in <code>dcgate.config.ts</code> and restart.</p>` : ''}
<div class="card"><dl class="settings">
<dt>Name</dt><dd>${site.name}</dd>
<dt>Domains</dt><dd>${list(site.domains)}</dd>
<dt>Members</dt><dd>${list(site.members)}</dd>
<dt>Events</dt><dd>${list(events)}</dd>
<dt>Destinations</dt><dd>${list(Object.keys(site.destinations))}</dd>
<dt>Sources</dt><dd>${list(Object.keys(site.sources))}</dd>
</dl></div>`
}

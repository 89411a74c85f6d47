import type { VerifyDomainAnswer } from '../../../core/sites/verify-domain.ts'
import { copyable, csrfField, html, time } from '../html.ts'
import { actionError, definePage, type PageContext } from '../page.ts'
import { publicBaseUrl } from '../urls.ts'
import { destinationActions, destinationsCard } from './setup-destinations.ts'
import { eventPlan } from './setup-plan.ts'
import { connectFormTargets, connectionsCard } from './connect-views.ts'

/** What capture remembers of a first-party host (plugins/capture/first-party/state.ts), read from the shared storage. */
interface FirstPartyState { verified: boolean, reason?: string, checkedAt: string, verifiedAt?: string }

/**
 * Everything a site owner copies into other tools, from the config and the admin API (the dashboard shows the
 * config, never edits it): the script tag, the release URL with its secret (the "Qualified" row), each webhook
 * source's URL, the first-party host and its verification state, each destination's tests, and the events with what
 * each platform receives or why it skips them.
 */
export const setupPage = definePage({
  slug: 'setup',
  nav: 'Setup',
  async render(ctx) {
    const { site, admin, plugin } = ctx
    const detail = await admin.site(site.id)
    const base = publicBaseUrl(plugin.config)
    const sources = plugin.registry.forSite(site.id, 'intake-source').map((c) => c.definition.name)
    return {
      title: 'Setup',
      formTargets: connectFormTargets(ctx),
      body: html`<h1>Setup</h1>
<div class="card"><h2>Tracking script</h2><p class="hint">Put this tag on every page of ${site.name}.</p>${copyable('script-tag', detail.script_tag, 'Script tag', true)}</div>
<div class="card"><h2>Qualified</h2><p class="hint">Your CRM calls this URL when a held lead qualifies (the “Qualified” row of your event sync settings). It holds the release secret: keep it private.</p>
${copyable('release-url', detail.release_url, 'Release URL')}</div>
<div class="card"><h2>Webhook sources</h2>${sources.length
    ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Source</th><th scope="col">URL</th></tr></thead><tbody>${sources.map((name) => html`<tr><td>${name}</td><td>${copyable(`source-${name}`, `${base}/api/v1/conversions/${name}/${site.copKey}`, `${name} webhook URL`)}</td></tr>`)}</tbody></table></div>`
    : html`<p>No source is configured under this site's <code>sources</code>.</p>`}</div>
${connectionsCard(ctx)}
${await firstParty(ctx)}
${destinationsCard(ctx)}
<div class="card"><h2>Events</h2>${eventPlan(ctx)}</div>`,
    }
  },
  actions: {
    ...destinationActions,
    async 'verify-domain'({ site, admin }) {
      if (!site.config.firstPartyHost) throw actionError(400, 'This site has no firstPartyHost in the config.')
      const answer = await admin.request<VerifyDomainAnswer>('POST', `/admin/api/sites/${encodeURIComponent(site.id)}/verify-domain`)
      if (answer.status !== 200) throw actionError(502, 'The check could not run (is the capture plugin on?).')
      const { verified, reason, host } = answer.data
      return {
        audit: { action: 'checked first-party host', detail: `${host}: ${verified ? 'verified' : 'not verified'}` },
        flash: verified ? { text: `${host} is verified.` } : { text: `${host} is not verified: ${reason ?? 'unknown reason'}`, kind: 'error' },
      }
    },
  },
})

async function firstParty({ site, plugin, csrf, href }: PageContext) {
  const host = site.config.firstPartyHost
  if (!host) return html`<div class="card"><h2>First-party host</h2><p>None: the script is served from the shared host. Set <code>firstPartyHost</code> in the config to serve it from your own subdomain.</p></div>`
  const state = await plugin.storage.getItem<FirstPartyState>(`first-party:${host}`)
  const badge = state?.verified ? html`<span class="badge ok">Verified</span>` : html`<span class="badge error">Not verified</span>`
  return html`<div class="card"><h2>First-party host</h2><dl class="facts"><dt>Host</dt><dd><code>${host}</code></dd><dt>State</dt><dd>${badge}${
    state?.reason ? html` <span class="muted">${state.reason}</span>` : ''}</dd><dt>Last checked</dt><dd>${time(state?.checkedAt)}</dd><dt>Verified</dt><dd>${time(state?.verifiedAt)}</dd></dl>
<form method="post" action="${href('setup', 'verify-domain')}" class="actions">${csrfField(csrf)}<button type="submit" class="button secondary">Check now</button></form></div>`
}

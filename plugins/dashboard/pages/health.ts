/**
 * The Overview's delivery health (docs/dashboard.md#delivery-health): per destination, the share of the alert
 * window's ended deliveries that were sent, the last refusal and its reason, since when it is failing or healthy, and
 * the alerts that hold (core/health/alerts.ts). Its own file, drawn into the Overview by one call.
 */
import { describeCause, percent } from '../../../core/health/causes.ts'
import { html, time, type Html } from '../html.ts'
import type { PageContext } from '../page.ts'
import { siteHealth } from '../queries/health.ts'

export async function healthSection(ctx: PageContext): Promise<Html> {
  const platforms = ctx.plugin.registry.forSite(ctx.site.id, 'ad-platform').map((c) => c.definition.name)
  const { windowMinutes } = ctx.site.config.alerts
  const { destinations, alerts } = await siteHealth(ctx.plugin.prepared, ctx.site.id, platforms, windowMinutes)
  const rows = destinations.map((d) => {
    const ended = d.sent + d.failed
    const raised = alerts.filter((a) => a.provider === d.provider)
    return html`<tr><td>${d.provider}</td>
<td>${ended ? html`${percent(d.sent / ended)} <span class="muted">(${d.sent} of ${ended})</span>` : html`<span class="muted">nothing ended</span>`}</td>
<td>${d.state === 'unknown' ? html`<span class="badge">no delivery yet</span>` : html`<span class="badge ${d.state === 'failing' ? 'error' : 'ok'}">${d.state === 'failing' ? 'failing' : 'healthy'}</span> since ${time(d.since)}`}</td>
<td>${d.last_refusal_at ? html`${time(d.last_refusal_at)}${d.last_refusal_status ? html` <span class="muted">HTTP ${d.last_refusal_status}</span>` : ''}` : html`<span class="muted">none</span>`}</td>
<td class="reason">${d.last_refusal ?? ''}</td>
<td>${raised.length ? raised.map((a) => html`<span class="badge error">${describeCause(a.cause)}</span> `) : html`<span class="muted">none</span>`}</td></tr>`
  })
  const sunsets = alerts.filter((a) => a.cause === 'sunset')
  return html`<section id="health" aria-labelledby="health-title"><h2 id="health-title">Delivery health, last ${windowMinutes} minutes</h2>
${platforms.length ? html`<div class="table-wrap"><table><caption>Per platform: deliveries sent of those that ended in the window, since when it is healthy or failing, the last refusal, and the alerts that hold</caption><thead><tr>
<th scope="col">Platform</th><th scope="col">Sent</th><th scope="col">State</th><th scope="col">Last refusal</th><th scope="col">Reason</th><th scope="col">Alerts</th></tr></thead>
<tbody>${rows}</tbody></table></div>` : html`<p>No ad platform is configured for this site.</p>`}
${sunsets.map((a) => html`<p class="reason">${a.detail ?? ''}</p>`)}</section>`
}

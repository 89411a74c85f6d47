import { planSiteEvents, type EventPlanRow } from '../../../core/delivery/event-plan.ts'
import { html } from '../html.ts'
import type { PageContext } from '../page.ts'

/**
 * The Setup page's "Events" card: per event and platform, what a conversion of it is sent as, or why that platform
 * skips it. The delivery code decides (core/delivery/event-plan.ts), so the page says what the deliveries will record.
 */
export function eventPlan({ site, plugin }: PageContext) {
  const platforms = plugin.registry.forSite(site.id, 'ad-platform').map((c) => ({ name: c.definition.name, label: c.definition.label ?? c.definition.name }))
  const rows = planSiteEvents(site, plugin.registry)
  return html`<p class="hint">${platforms.length
    ? html`Delivered to ${platforms.map((p) => p.label).join(', ')}. Each cell is what a consenting visitor's conversion, with a click id and an email, is sent as, or why it is skipped.`
    : 'No ad platform is configured: conversions are stored only.'}</p>
<div class="table-wrap"><table><thead><tr><th scope="col">Event</th><th scope="col">Name</th><th scope="col">Release</th>${platforms.map((p) => html`<th scope="col">${p.label}</th>`)}${platforms.length ? '' : html`<th scope="col">Sends as</th>`}</tr></thead>
<tbody>${rows.map((row) => html`<tr><td><code>${row.key}</code></td><td>${row.name}</td><td>${row.release === 'when_qualified' ? 'when qualified' : 'immediately'}</td>${platforms.length ? platforms.map((p) => cell(row, p.name)) : html`<td>${row.standardEvent ?? html`<span class="muted">not sent</span>`}</td>`}</tr>`)}</tbody></table></div>`
}

function cell(row: EventPlanRow, platform: string) {
  if (row.nowhere) return html`<td><span class="muted">not sent: ${row.nowhere}</span></td>`
  const step = row.steps.find((s) => s.platform === platform)?.step
  if (!step) return html`<td><span class="muted">not sent</span></td>`
  if (step.kind === 'skip') return html`<td><span class="badge">Skipped</span> <span class="muted">${step.reason}</span></td>`
  return html`<td>sent as <code>${step.as}</code></td>`
}

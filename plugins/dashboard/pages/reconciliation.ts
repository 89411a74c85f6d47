/**
 * Reconciliation (docs/dashboard.md#reconciliation): per UTC day, the orders received from a payment-confirmed source
 * against what each platform accepted, with the gap explained by reason: consent, bot, skipped, failed, pending.
 */
import { html, type Html } from '../html.ts'
import { definePage } from '../page.ts'
import { reconciliation, type ReconciliationRow } from '../queries/reconciliation.ts'

/** Days the page covers. */
export const RECONCILIATION_DAYS = 30

const GAP: readonly { key: keyof ReconciliationRow, label: string }[] = [
  { key: 'consent', label: 'Consent' },
  { key: 'bot', label: 'Bot' },
  { key: 'skipped', label: 'Skipped' },
  { key: 'failed', label: 'Failed' },
  { key: 'pending', label: 'Pending' },
]

export const reconciliationPage = definePage({
  slug: 'reconciliation', nav: 'Reconciliation',
  async render(ctx) {
    const { registry, prepared } = ctx.plugin
    // The sources whose verified bodies prove a payment (Stripe, Shopify, WooCommerce): their conversions are orders.
    const paymentSources = registry.list('intake-source').filter((s) => s.confirmation === 'payment_confirmed' && s.signature === 'required').map((s) => s.name)
    const configured = registry.forSite(ctx.site.id, 'intake-source').map((c) => c.definition.name).filter((name) => paymentSources.includes(name))
    const platforms = registry.forSite(ctx.site.id, 'ad-platform').map((c) => c.definition.name)
    const rows = await reconciliation(prepared, ctx.site.id, paymentSources, RECONCILIATION_DAYS, platforms)
    return {
      title: 'Reconciliation',
      body: html`<h1>Reconciliation</h1>
<p class="muted">Orders received from a payment-confirmed source (${paymentSources.join(', ')}: a verified webhook) per day, last ${RECONCILIATION_DAYS} days (UTC), against what each platform accepted. The gap is explained by reason: consent (the visitor's consent or a US opt-out kept it from the platform), bot (the matched visit was ruled a bot), skipped (the platform had no use for it, or it was held or unmapped), failed (refused, or given up on), pending (not ended yet).</p>
${configured.length ? '' : html`<p>No payment-confirmed source is configured for this site (<code>sites[].sources</code>: ${paymentSources.join(', ')}), so no order is counted here.</p>`}
${!platforms.length ? html`<p>No ad platform is configured for this site.</p>` : rows.length ? table(rows) : html`<p>No order received in the last ${RECONCILIATION_DAYS} days.</p>`}`,
    }
  },
})

function table(rows: readonly ReconciliationRow[]): Html {
  return html`<div class="table-wrap"><table><caption>Orders per day and platform: accepted, and the gap by reason</caption><thead><tr>
<th scope="col">Day</th><th scope="col">Platform</th><th scope="col">Orders</th><th scope="col">Accepted</th><th scope="col">Gap</th>
${GAP.map((g) => html`<th scope="col">${g.label}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr><td>${r.day}</td><td>${r.provider}</td><td>${r.orders}</td><td>${r.accepted}</td><td>${r.orders - r.accepted}</td>
${GAP.map((g) => html`<td>${r[g.key] || html`<span class="muted">0</span>`}</td>`)}</tr>`)}</tbody></table></div>`
}

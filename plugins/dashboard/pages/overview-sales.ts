/**
 * The Overview's figures for a shop owner: conversions and revenue per day and per event, and per platform how many
 * deliveries it accepted, refused, and how many wait. Platforms by their names (platforms.ts).
 */
import { stackedBarChart } from '../charts.ts'
import { html, type Html } from '../html.ts'
import type { PageContext } from '../page.ts'
import { platformLabel } from '../platforms.ts'
import type { DayCount } from '../queries/overview.ts'
import type { SalesRow } from '../queries/sales.ts'

/** Revenue per currency, as "1,250.00 EUR, 40.00 USD"; a dash when no conversion carried a value. */
export function revenueText(byCurrency: ReadonlyMap<string, number>): string {
  const parts = [...byCurrency].filter(([currency]) => currency).map(([currency, sum]) => `${sum.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`)
  return parts.length ? parts.join(', ') : '–'
}

interface Totals { conversions: number, revenue: Map<string, number> }

function totalsBy(rows: readonly SalesRow[], keyOf: (row: SalesRow) => string): Map<string, Totals> {
  const totals = new Map<string, Totals>()
  for (const row of rows) {
    const key = keyOf(row)
    const entry = totals.get(key) ?? { conversions: 0, revenue: new Map<string, number>() }
    entry.conversions += row.conversions
    if (row.currency) entry.revenue.set(row.currency, (entry.revenue.get(row.currency) ?? 0) + row.revenue)
    totals.set(key, entry)
  }
  return totals
}

export function salesSections(ctx: PageContext, days: readonly string[], sales: readonly SalesRow[]): Html {
  const perDay = totalsBy(sales, (r) => r.day)
  const perEvent = [...totalsBy(sales, (r) => r.event)].sort((a, b) => b[1].conversions - a[1].conversions)
  const eventName = (key: string) => ctx.site.config.events.find((e) => e.key === key)?.name ?? key
  const chart = stackedBarChart({
    id: 'chart-conversions', title: 'Conversions per day', columns: days,
    series: [{ key: 'conversions', label: 'conversions', colour: '#2f6fdf' }],
    value: (day) => perDay.get(day)?.conversions ?? 0, columnLabel: (day) => day.slice(5),
  })
  return html`<section aria-labelledby="sales-per-day"><h2 id="sales-per-day">Conversions and revenue per day, last ${days.length} days (UTC)</h2>
<p class="muted">Conversions sent on to the platforms (held leads once released); an order the pixel and the shop both reported counts once. Revenue as received, before refunds.</p>
${chart}
<div class="table-wrap"><table><caption>Conversions and revenue per day</caption><thead><tr><th scope="col">Day</th><th scope="col">Conversions</th><th scope="col">Revenue</th></tr></thead>
<tbody>${[...days].reverse().map((day) => html`<tr><td class="nowrap">${day}</td><td>${perDay.get(day)?.conversions ?? 0}</td><td>${revenueText(perDay.get(day)?.revenue ?? new Map())}</td></tr>`)}</tbody></table></div></section>
<section aria-labelledby="sales-per-event"><h2 id="sales-per-event">Conversions and revenue per event, last ${days.length} days</h2>
${perEvent.length ? html`<div class="table-wrap"><table><caption>Per event</caption><thead><tr><th scope="col">Event</th><th scope="col">Conversions</th><th scope="col">Revenue</th></tr></thead>
<tbody>${perEvent.map(([key, totals]) => html`<tr><td>${eventName(key)}</td><td>${totals.conversions}</td><td>${revenueText(totals.revenue)}</td></tr>`)}</tbody></table></div>` : html`<p>No conversion in this period.</p>`}</section>`
}

/** Per platform: deliveries it accepted, refused (failed), that wait, and that dcgate skipped, over the charts' days. */
export function platformTotals(ctx: PageContext, platforms: readonly string[], rows: readonly DayCount[]): Html {
  if (!platforms.length) return html``
  const count = (platform: string, outcome: DayCount['outcome']) => rows.filter((r) => r.provider === platform && r.outcome === outcome).reduce((sum, r) => sum + r.deliveries, 0)
  return html`<div class="table-wrap"><table><caption>Per platform</caption><thead><tr><th scope="col">Platform</th><th scope="col">Accepted</th><th scope="col">Failed</th><th scope="col">Waiting</th><th scope="col">Skipped</th></tr></thead>
<tbody>${platforms.map((platform) => html`<tr><td>${platformLabel(ctx.plugin, ctx.site.id, platform)}</td><td>${count(platform, 'sent')}</td><td>${count(platform, 'failed')}</td><td>${count(platform, 'waiting')}</td><td>${count(platform, 'skipped')}</td></tr>`)}</tbody></table></div>`
}

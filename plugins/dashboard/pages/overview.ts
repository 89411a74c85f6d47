/**
 * Overview: deliveries per day per platform and outcome (one chart per platform), match quality, what waits, email
 * checks against the plan's quota, and the last errors per platform.
 */
import { FREE_EMAIL_CHECKS } from '../../../core/sites/plans.ts'
import { shareBar, stackedBarChart, type Series } from '../charts.ts'
import { html, time, type Html } from '../html.ts'
import { definePage, type PageContext } from '../page.ts'
import { healthSection } from './health.ts'
import { deliveriesPerDay, lastErrors, matchQuality, siteCounts, type DayCount, type LastError } from '../queries/overview.ts'
import { salesPerDayAndEvent } from '../queries/sales.ts'
import { platformLabel } from '../platforms.ts'
import { platformTotals, salesSections } from './overview-sales.ts'

/** Days the charts and the match quality cover. */
const DAYS = 14
const ERRORS_PER_PLATFORM = 3
const DEFAULT_EXPIRE_AFTER_DAYS = 30

const OUTCOMES: readonly Series[] = [
  { key: 'sent', label: 'sent', colour: '#1f9d55' },
  { key: 'failed', label: 'failed', colour: '#d64545' },
  { key: 'skipped', label: 'skipped', colour: '#9aa5b1' },
  { key: 'waiting', label: 'waiting', colour: '#e0a526' },
]

export const overviewPage = definePage({
  slug: 'overview', nav: 'Overview',
  async render(ctx) {
    const { prepared } = ctx.plugin
    const platforms = ctx.plugin.registry.forSite(ctx.site.id, 'ad-platform').map((c) => c.definition.name)
    const [sales, perDay, quality, counts, errors] = await Promise.all([
      salesPerDayAndEvent(prepared, ctx.site.id, DAYS),
      deliveriesPerDay(prepared, ctx.site.id, DAYS),
      matchQuality(prepared, ctx.site.id, DAYS),
      siteCounts(prepared, ctx.site.id, ctx.plugin.config.release?.expireAfterDays ?? DEFAULT_EXPIRE_AFTER_DAYS),
      lastErrors(prepared, ctx.site.id, platforms, ERRORS_PER_PLATFORM),
    ])
    const health = await healthSection(ctx)
    return {
      title: 'Overview',
      body: html`<h1>Overview</h1>
<section class="cards" aria-label="At a glance">
${card('Held leads waiting', counts.held_waiting, html`<a href="${ctx.href('held')}">Held leads</a>`)}
${card('Identified users', counts.identified_users, html`<a href="${ctx.href('users')}">Identified users</a>`)}
${card('Email checks used', ctx.site.plan === 'free' ? `${counts.email_checks} of ${FREE_EMAIL_CHECKS}` : counts.email_checks,
  ctx.site.plan === 'free' ? html`free plan: ${Math.max(0, FREE_EMAIL_CHECKS - counts.email_checks)} left` : html`${ctx.site.plan} plan`)}
</section>
${health}
${salesSections(ctx, lastDays(DAYS), sales)}
<section aria-labelledby="per-day"><h2 id="per-day">Deliveries per platform, last ${DAYS} days (UTC)</h2>
${platformTotals(ctx, platforms, perDay)}
${platforms.length ? platformCharts(ctx, platforms, perDay) : html`<p>No ad platform is configured for this site, so nothing is delivered.</p>`}</section>
<section aria-labelledby="quality"><h2 id="quality">Match quality, last ${DAYS} days</h2>
<p class="muted">Of ${quality.conversions} conversions received, how many carry each identifier the platforms match people with.</p>
${shareBar('Click id', quality.with_click_id, quality.conversions)}${shareBar('Email', quality.with_email, quality.conversions)}${shareBar('Phone', quality.with_phone, quality.conversions)}</section>
<section aria-labelledby="errors"><h2 id="errors">Last errors per platform</h2>${errorsTable(ctx, platforms, errors)}</section>`,
    }
  },
})

function card(label: string, value: unknown, note: Html): Html {
  return html`<div class="card"><p class="card-label">${label}</p><p class="card-value">${value}</p><p class="card-note">${note}</p></div>`
}

/** The last DAYS UTC days, oldest first, as YYYY-MM-DD. */
export function lastDays(days: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10))
}

function platformCharts(ctx: PageContext, platforms: readonly string[], rows: readonly DayCount[]): Html {
  const days = lastDays(DAYS)
  const counts = new Map(rows.map((r) => [`${r.provider}|${r.day}|${r.outcome}`, r.deliveries]))
  return html`<div class="charts">${platforms.map((platform) => stackedBarChart({
    id: `chart-${platform}`,
    title: `${platformLabel(ctx.plugin, ctx.site.id, platform)}: deliveries per day`,
    columns: days,
    series: OUTCOMES,
    value: (day, outcome) => counts.get(`${platform}|${day}|${outcome}`) ?? 0,
    columnLabel: (day) => day.slice(5),
  }))}</div>`
}

function errorsTable(ctx: PageContext, platforms: readonly string[], errors: readonly LastError[]): Html {
  if (!errors.length) return html`<p>No failed delivery${platforms.length ? '' : ' (no platform configured)'}.</p>`
  return html`<div class="table-wrap"><table><caption>The ${ERRORS_PER_PLATFORM} newest failed deliveries of each platform</caption><thead><tr>
<th scope="col">Platform</th><th scope="col">When</th><th scope="col">HTTP status</th><th scope="col">Reason</th></tr></thead>
<tbody>${errors.map((e) => html`<tr><td>${platformLabel(ctx.plugin, ctx.site.id, e.provider)}</td><td><a href="${ctx.href('deliveries')}?id=${e.id}">${time(e.at)}</a></td>
<td>${e.http_status ?? html`<span class="muted">–</span>`}</td><td class="reason">${e.error ?? ''}</td></tr>`)}</tbody></table></div>`
}

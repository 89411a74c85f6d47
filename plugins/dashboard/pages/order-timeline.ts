/**
 * One order's timeline (Deliveries, `?order=`): from the visitor's first visit to each platform's answer, oldest
 * first. Shown as the delivery detail shows it: pages as host and path (their query may hold an email), platforms by
 * name, each delivery linked to its detail.
 */
import { html, time, type Html } from '../html.ts'
import type { PageContext, PageResult } from '../page.ts'
import { platformLabel } from '../platforms.ts'
import { orderHistory, type OrderConversion, type OrderDelivery, type OrderVisit } from '../queries/timeline.ts'
import { valueText } from './deliveries-parts.ts'

const MAX_ORDER_ID = 255

interface Step { at: string, what: Html }

/** The order id as a link to its timeline. */
export function orderLink(ctx: PageContext, orderId: string): Html {
  return html`<a href="${ctx.href('deliveries')}?${new URLSearchParams({ order: orderId }).toString()}">${orderId}</a>`
}

export async function renderOrderTimeline(ctx: PageContext, orderId: string): Promise<PageResult> {
  const back = html`<p><a href="${ctx.href('deliveries')}">Back to the deliveries</a></p>`
  if (!orderId || orderId.length > MAX_ORDER_ID) return { title: 'Order not found', status: 400, body: html`<h1>Order not found</h1><p>Order: at most ${MAX_ORDER_ID} characters.</p>${back}` }
  const history = await orderHistory(ctx.plugin.prepared, ctx.site.id, orderId)
  if (!history.conversions.length) return { title: 'Order not found', status: 404, body: html`<h1>Order not found</h1><p>This site has received no conversion for order ${orderId}.</p>${back}` }
  const steps = [
    ...visitSteps(history.visits, history.conversions),
    ...history.conversions.flatMap((c) => conversionSteps(ctx, c)),
    ...history.deliveries.map((d) => deliveryStep(ctx, d)),
  ].sort((a, b) => a.at.localeCompare(b.at))
  return {
    title: `Order ${orderId}`,
    body: html`<h1>Order ${orderId}: timeline</h1>${back}
<p class="muted">Oldest first, in UTC. Visits appear when the tracking script saw the buyer and the conversion carried its session.</p>
<ol class="timeline">${steps.map((step) => html`<li><span class="timeline-time">${time(step.at)}</span> ${step.what}</li>`)}</ol>`,
  }
}

function visitSteps(visits: readonly OrderVisit[], conversions: readonly OrderConversion[]): Step[] {
  const converting = new Set(conversions.map((c) => c.session_id))
  return visits.map((visit, i) => ({
    at: visit.started_at,
    what: html`<strong>${i === 0 ? 'First visit' : converting.has(visit.session_id) ? 'Visit that converted' : 'Visit'}</strong>: landed on ${hostAndPath(visit.landing_url) ?? 'an unknown page'}${visit.referrer && hostAndPath(visit.referrer) ? html`, coming from ${hostAndPath(visit.referrer)}` : ''} (${visit.page_count} ${visit.page_count === 1 ? 'page' : 'pages'})`,
  }))
}

function conversionSteps(ctx: PageContext, c: OrderConversion): Step[] {
  const name = ctx.site.config.events.find((e) => e.key === c.event)?.name ?? c.event
  const steps: Step[] = [{
    at: c.received_at,
    what: html`<strong>${name} received</strong> from ${c.source} (${c.trust === 'trusted' ? 'signed or keyed' : 'public, from the page'}), value ${valueText(c)}${c.state === 'held' ? '; held until qualified' : c.state === 'unmapped' ? '; not an event the site sends on' : ''}`,
  }]
  if (c.resolved_at && c.state !== 'held') steps.push({ at: c.resolved_at, what: html`<strong>${name} ${c.state === 'released' ? 'released' : c.state === 'dropped' ? 'dropped (not a fit)' : 'expired unqualified'}</strong>` })
  if (c.refunded_at) steps.push({ at: c.refunded_at, what: html`<strong>Refunded</strong>${c.refunded_value === null ? '' : html`, ${valueText({ value: c.refunded_value, currency: c.currency })}`}` })
  return steps
}

const OUTCOME: Readonly<Record<string, string>> = { sent: 'accepted', failed: 'failed', skipped: 'not sent', pending: 'waiting', retrying: 'waiting to try again' }

function deliveryStep(ctx: PageContext, d: OrderDelivery): Step {
  const platform = platformLabel(ctx.plugin, ctx.site.id, d.provider)
  const what = d.kind === 'adjustment' ? `refund told to ${platform}` : platform
  return {
    at: d.sent_at ?? d.updated_at,
    what: html`<strong>${what}: ${OUTCOME[d.status] ?? d.status}</strong>${d.http_status === null ? '' : ` (HTTP ${d.http_status})`}${d.error ? html`: <span class="${d.status === 'failed' ? 'reason' : 'muted'}">${d.error}</span>` : ''}
<a href="${ctx.href('deliveries')}?id=${d.id}">Details<span class="visually-hidden"> of the ${platform} delivery</span></a>`,
  }
}

/** A URL as host and path: its query may carry an email or a token the page had there. */
function hostAndPath(url: string | null): string | undefined {
  if (!url || !URL.canParse(url)) return undefined
  const parsed = new URL(url)
  return `${parsed.host}${parsed.pathname}`
}

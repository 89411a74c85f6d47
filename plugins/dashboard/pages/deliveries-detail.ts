/** One delivery: its state, the request as sent (rebuilt and redacted, deliveries-request.ts) and the platform's answer. */
import { html, time } from '../html.ts'
import type { PageContext, PageResult } from '../page.ts'
import { findDelivery, type DeliveryDetailRow } from '../queries/deliveries.ts'
import { rebuildRequest } from './deliveries-request.ts'
import { filterQuery, type FilterFields } from './deliveries-filter.ts'
import { eventLabel, reasonOf, retryForm, statusBadge } from './deliveries-parts.ts'
import { orderLink } from './order-timeline.ts'
import { platformLabel } from '../platforms.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export async function renderDeliveryDetail(ctx: PageContext, id: string, fields: FilterFields): Promise<PageResult> {
  const back = html`<p><a href="${ctx.href('deliveries')}${filterQuery(fields) ? `?${filterQuery(fields)}` : ''}">Back to the deliveries</a></p>`
  const delivery = UUID.test(id) ? await findDelivery(ctx.plugin.prepared, ctx.site.id, id) : undefined
  if (!delivery) return { title: 'Delivery not found', status: 404, body: html`<h1>Delivery not found</h1><p>This site has no delivery with that id.</p>${back}` }
  const rebuilt = await rebuildRequest(ctx.plugin, ctx.site.id, delivery)
  const platform = platformLabel(ctx.plugin, ctx.site.id, delivery.provider)
  const row = (label: string, value: unknown) => html`<dt>${label}</dt><dd>${value ?? html`<span class="muted">–</span>`}</dd>`
  return {
    title: `Delivery to ${platform}`,
    body: html`<h1>Delivery to ${platform}</h1>${back}
<dl class="facts">${row('Event', eventLabel(delivery))}${delivery.adjustment ? row('Refund', refundText(delivery.adjustment)) : ''}${row('Sent as', delivery.standard_event)}${row('Order id', delivery.order_id === null ? null : html`${orderLink(ctx, delivery.order_id)} <span class="muted">(timeline)</span>`)}${row('Message id', delivery.message_id)}
${row('Source', delivery.source)}${row('Value', delivery.value === null ? null : `${delivery.value} ${delivery.currency ?? ''}`)}
${row('Platform', platform)}${row('Status', statusBadge(delivery.status))}${row('HTTP status', delivery.http_status)}${row('Attempts', delivery.attempts)}
${row('Reason', reasonOf(delivery) || null)}${row('Created', time(delivery.created_at))}${row('Last change', time(delivery.updated_at))}
${row('Sent', time(delivery.sent_at))}${delivery.status === 'retrying' || delivery.status === 'pending' ? row('Next attempt', time(delivery.next_attempt_at)) : ''}
${row('Last attempt took', delivery.last_duration_ms === null ? null : `${delivery.last_duration_ms} ms`)}</dl>
${delivery.status === 'failed' && !(delivery.clear_erased_at && delivery.kind !== 'adjustment') ? retryForm(ctx, delivery.id, fields, 'detail') : ''}
<h2>The request as sent</h2>
${'request' in rebuilt
  ? html`<p class="muted">Rebuilt from the stored conversion by the ${delivery.provider} adapter, as the delivery worker builds it (the worker may have sent it
in one request with other conversions). Personal data is hashed; credentials${delivery.clear_erased_at ? '' : ', the IP address and the user agent (in clear or hashed)'} are shown as [redacted],
and URLs as origin and path only.</p>
${delivery.clear_erased_at ? html`<p role="note">The IP address and user agent of this conversion were erased on ${time(delivery.clear_erased_at)}, so this rebuilt request lacks them.
${delivery.kind === 'adjustment' ? '' : `A retry is refused: it would reach ${delivery.provider} without what the first attempt sent.`}</p>` : ''}
<p><code>${rebuilt.request.method} ${rebuilt.request.url}</code></p>
<ul class="headers">${rebuilt.request.headers.map(([name, value]) => html`<li><code>${name}: ${value}</code></li>`)}</ul>
<pre class="request-body" tabindex="0" aria-label="Request body">${rebuilt.request.body}</pre>`
  : html`<p>${rebuilt.unavailable}</p>`}
<h2>The platform's answer</h2>
${delivery.http_status === null && !delivery.error
  ? html`<p>No answer yet.</p>`
  : html`<dl class="facts">${row('HTTP status', delivery.http_status)}${row(delivery.status === 'sent' ? 'Message' : 'Its message, or why dcgate did not send', delivery.error)}</dl>
<p class="muted">dcgate keeps the status and the platform's message of the last attempt, not the whole answer.</p>`}`,
  }
}

/** A refund told to the platform: its id, and for a partial one the value the platform is told is left. */
function refundText(adjustment: NonNullable<DeliveryDetailRow['adjustment']>): string {
  return adjustment.value === undefined ? adjustment.refundId : `${adjustment.refundId}, value left ${adjustment.value} ${adjustment.currency ?? ''}`.trim()
}

/** Pieces the delivery list and the detail view share: the Retry form and the reason a delivery was not sent. */
import { csrfField, html, type Html } from '../html.ts'
import type { PageContext } from '../page.ts'
import type { DeliveryListRow } from '../queries/deliveries.ts'
import type { FilterFields } from './deliveries-filter.ts'

/** Hidden copies of the filter, so an action keeps the view it came from. */
export function filterFields(fields: FilterFields): Html {
  return html`${(['platform', 'status', 'event', 'from', 'to'] as const).map((name) => fields[name] ? html`<input type="hidden" name="${name}" value="${fields[name]}">` : '')}`
}

export function retryForm(ctx: PageContext, id: string, fields: FilterFields, back?: 'detail'): Html {
  return html`<form method="post" action="${ctx.href('deliveries', 'retry')}" class="inline">${csrfField(ctx.csrf)}${filterFields(fields)}
<input type="hidden" name="id" value="${id}">${back ? html`<input type="hidden" name="back" value="${back}">` : ''}<button type="submit" class="button small">Retry</button></form>`
}

/**
 * Why a delivery was not sent: the platform's message or dcgate's reason; for a sent one, the rule that shaped it when
 * it was not the usual one (a late-qualified lead) and what the platform said later about it (Google's request
 * status), else nothing.
 */
export function reasonOf(row: Pick<DeliveryListRow, 'status' | 'error' | 'note' | 'diagnosis'>): string {
  if (row.status === 'sent') return [row.note, row.diagnosis].filter(Boolean).join('; ')
  return row.error ?? (row.status === 'pending' ? 'waiting for its first attempt' : '')
}

/** The event as the report names it: a refund told to the platform says so, with its kind. */
export function eventLabel(row: Pick<DeliveryListRow, 'event' | 'kind' | 'adjustment'>): string {
  return row.kind === 'adjustment' ? `${row.event}: refund (${row.adjustment?.type ?? 'adjustment'})` : row.event
}


/** A delivery's status as a badge: green when sent, red when failed, amber while it waits (pending, retrying). */
export function statusBadge(status: string): Html {
  const tone = status === 'sent' ? ' ok' : status === 'failed' ? ' error' : WAITING.has(status) ? ' waiting' : ''
  return html`<span class="badge${tone}">${status}</span>`
}

const WAITING = new Set(['pending', 'retrying'])

/**
 * The reason as a table cell: red only for a failed delivery. A waiting one's last error is not a failure yet
 * (it is tried again), and a skipped one's reason is dcgate's choice: both in the normal colour.
 */
export function reasonCell(row: Pick<DeliveryListRow, 'status' | 'error' | 'note' | 'diagnosis'>): Html {
  const reason = reasonOf(row)
  const shown = WAITING.has(row.status) && row.error ? `waiting to try again; last attempt: ${row.error}` : reason
  return html`<td class="${row.status === 'failed' ? 'reason' : 'reason-note'}">${shown}</td>`
}

/** A value as received, with its currency; a dash for none. */
export function valueText(row: { value: number | null, currency: string | null }): Html | string {
  if (row.value === null) return html`<span class="muted">–</span>`
  return `${row.value.toLocaleString('en-US', { maximumFractionDigits: 2 })}${row.currency ? ` ${row.currency}` : ''}`
}

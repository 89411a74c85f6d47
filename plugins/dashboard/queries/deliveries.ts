/** The Deliveries page: the delivery report, filtered and paged newest first; one delivery with its conversion. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { PAGE_ROWS, sqlBefore, sqlIsoTime, type PageEnd } from './paging.ts'

/** What the filter form narrows the report to; every field optional. */
export interface DeliveryFilter {
  provider?: string
  status?: string
  event?: string
  /** Created at or after this instant (ISO). */
  from?: string
  /** Created before this instant (ISO). */
  to?: string
}

export interface DeliveryListRow {
  id: string
  paging_time: string
  conversion_id: string
  event: string
  order_id: string | null
  message_id: string
  provider: string
  status: string
  http_status: number | null
  attempts: number
  error: string | null
  next_attempt_at: string | null
  /** `conversion`, or `adjustment` for a refund told to the platform (core/delivery/adjust.ts). */
  kind: string
  /** An adjustment's refund: { type: retraction | restatement, refundId, at, value?, currency? }. */
  adjustment: { type: string, refundId: string, at: string, value?: number, currency?: string } | null
  /** The rule that shaped the request when it was not the usual one (a late-qualified lead). */
  note: string | null
  /** What the platform said later about the request it took (core/delivery/diagnostics.ts: Google's request status). */
  diagnosis: string | null
  /** The conversion's value and currency, as received. */
  value: number | null
  currency: string | null
}

const DIAGNOSIS = '(select g.diagnosis from delivery_diagnostics g where g.delivery_id = d.id) as diagnosis'

/**
 * $1 site, $2/$3 page end (time, id), $4 from, $5 provider, $6 status, $7 event, $8 rows. Walks the
 * (site_id, created_at, id) index backwards from the page end; a delivery an inline attempt still holds shows as
 * pending (`all_deliveries`). Planned per call: each filter changes the best plan.
 */
const LIST_PAGE: PreparedStatement = {
  name: 'dashboard_deliveries_page_v5',
  reusePlan: false,
  text: `select d.id, ${sqlIsoTime('d.created_at')} as paging_time, d.conversion_id, c.event, c.order_id, c.message_id, d.provider, d.status,
      d.http_status, d.attempts, d.error, ${sqlIsoTime('d.next_attempt_at')} as next_attempt_at, d.kind, d.adjustment, d.note, ${DIAGNOSIS}, c.value, c.currency
    from all_deliveries d join conversions c on c.id = d.conversion_id
    where d.site_id = $1 and ${sqlBefore('d.created_at', 'd.id', 2)} and d.created_at >= coalesce($4::timestamptz, '-infinity')
      and ($5::text is null or d.provider = $5) and ($6::text is null or d.status = $6) and ($7::text is null or c.event = $7)
    order by d.created_at desc, d.id desc limit $8`,
}

/** One page (and one row more, when an older page exists). `to` and the page end bound it, whichever is earlier. */
export function listDeliveryPage(prepared: RunPrepared, siteId: string, filter: DeliveryFilter, end: PageEnd | null): Promise<DeliveryListRow[]> {
  const until = earlier(end, filter.to)
  return prepared<DeliveryListRow>(LIST_PAGE, [
    siteId, until?.time ?? null, until?.id ?? null, filter.from ?? null,
    filter.provider ?? null, filter.status ?? null, filter.event ?? null, PAGE_ROWS + 1,
  ])
}

/** The page end or the filter's `to` (before any id at that instant), whichever comes first. */
function earlier(end: PageEnd | null, to: string | undefined): PageEnd | null {
  const toEnd = to ? { time: to, id: '00000000-0000-0000-0000-000000000000' } : null
  if (!end || !toEnd) return end ?? toEnd
  return Date.parse(toEnd.time) < Date.parse(end.time) ? toEnd : end
}

export interface DeliveryDetailRow extends DeliveryListRow {
  sent_at: string | null
  created_at: string
  updated_at: string
  last_duration_ms: number | null
  source: string
  standard_event: string | null
  /** When the conversion's IP address and user agent were erased (core/delivery/clear-fields.ts); null while kept. */
  clear_erased_at: string | null
}

/** $1 site, $2 delivery. One delivery of the site with its conversion's summary. */
const ONE_DELIVERY: PreparedStatement = {
  name: 'dashboard_delivery_v4',
  reusePlan: false,
  text: `select d.id, ${sqlIsoTime('d.created_at')} as paging_time, d.conversion_id, c.event, c.order_id, c.message_id, d.provider, d.status,
      d.http_status, d.attempts, d.error, ${sqlIsoTime('d.next_attempt_at')} as next_attempt_at, d.kind, d.adjustment, d.note, ${DIAGNOSIS}, ${sqlIsoTime('d.sent_at')} as sent_at,
      ${sqlIsoTime('d.created_at')} as created_at, ${sqlIsoTime('d.updated_at')} as updated_at, d.last_duration_ms,
      c.source, c.standard_event, c.value, c.currency, ${sqlIsoTime('c.clear_erased_at')} as clear_erased_at
    from all_deliveries d join conversions c on c.id = d.conversion_id
    where d.site_id = $1 and d.id = $2`,
}

export async function findDelivery(prepared: RunPrepared, siteId: string, id: string): Promise<DeliveryDetailRow | undefined> {
  return (await prepared<DeliveryDetailRow>(ONE_DELIVERY, [siteId, id]))[0]
}

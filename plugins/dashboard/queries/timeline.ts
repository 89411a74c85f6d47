/** The order timeline: an order's conversions, the visits that led to them, and every platform's answer. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { sqlIsoTime } from './paging.ts'

/** Copies of one order a site keeps at most are few (the pixel's, the shop's, a retried webhook's). */
const MAX_CONVERSIONS = 20

export interface OrderConversion {
  id: string, received_at: string, occurred_at: string, event: string, source: string, trust: string, state: string,
  value: number | null, currency: string | null, session_id: string | null, refunded_at: string | null, refunded_value: number | null, resolved_at: string | null
}

/** $1 site, $2 order id, $3 rows. */
const CONVERSIONS: PreparedStatement = {
  name: 'dashboard_timeline_conversions_v1',
  reusePlan: false,
  text: `select id, ${sqlIsoTime('created_at')} as received_at, ${sqlIsoTime('occurred_at')} as occurred_at, event, source, trust, state, value, currency,
      session_id, ${sqlIsoTime('refunded_at')} as refunded_at, refunded_value, ${sqlIsoTime('resolved_at')} as resolved_at
    from conversions where site_id = $1 and order_id = $2 order by created_at, id limit $3`,
}

export interface OrderDelivery {
  id: string, conversion_id: string, provider: string, kind: string, status: string, http_status: number | null, error: string | null,
  created_at: string, sent_at: string | null, updated_at: string
}

/** $1 site, $2 conversion ids. */
const DELIVERIES: PreparedStatement = {
  name: 'dashboard_timeline_deliveries_v2',
  reusePlan: false,
  text: `select id, conversion_id, provider, kind, status, http_status, error, ${sqlIsoTime('created_at')} as created_at,
      ${sqlIsoTime('sent_at')} as sent_at, ${sqlIsoTime('updated_at')} as updated_at
    from all_deliveries where site_id = $1 and conversion_id = any($2::uuid[]) order by created_at, id`,
}

export interface OrderVisit { session_id: string, started_at: string, landing_url: string | null, referrer: string | null, page_count: number }

/** $1 site, $2 the conversions' sessions. The converting visits and the visitor's earlier ones, oldest first. */
const VISITS: PreparedStatement = {
  name: 'dashboard_timeline_visits_v1',
  reusePlan: false,
  text: `with converting as (select session_id, visitor_id from visits where site_id = $1 and session_id = any($2::text[]))
    select session_id, ${sqlIsoTime('started_at')} as started_at, landing_url, referrer, page_count from visits
    where site_id = $1 and (session_id in (select session_id from converting)
      or visitor_id in (select visitor_id from converting where visitor_id is not null))
    order by started_at limit 50`,
}

export interface OrderHistory { conversions: OrderConversion[], deliveries: OrderDelivery[], visits: OrderVisit[] }

export async function orderHistory(prepared: RunPrepared, siteId: string, orderId: string): Promise<OrderHistory> {
  const conversions = await prepared<OrderConversion>(CONVERSIONS, [siteId, orderId, MAX_CONVERSIONS])
  const sessions = [...new Set(conversions.flatMap((c) => c.session_id ? [c.session_id] : []))]
  const [deliveries, visits] = await Promise.all([
    conversions.length ? prepared<OrderDelivery>(DELIVERIES, [siteId, conversions.map((c) => c.id)]) : [],
    sessions.length ? prepared<OrderVisit>(VISITS, [siteId, sessions]) : [],
  ])
  return { conversions, deliveries, visits }
}

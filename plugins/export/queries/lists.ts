import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { sqlTime } from '../paging/instant.ts'

/**
 * Every list statement takes $1 site, $2/$3 since (time, id), $4/$5 until (time, id), $6 rows to return, and answers
 * rows in (paging time, id) order with `paging_id` (the tiebreak, a UUID) beside the fields of the record.
 */
export interface PageRange { siteId: string, sinceTime: string, sinceId: string, untilTime: string, untilId: string, rows: number }

export type PageRow = Record<string, unknown> & { paging_id: string }

export function readPage(sql: RunPrepared, statement: PreparedStatement, range: PageRange): Promise<PageRow[]> {
  return sql<PageRow>(statement, [range.siteId, range.sinceTime, range.sinceId, range.untilTime, range.untilId, range.rows])
}

/** The page's range of (paging time, id): $2/$3 since, $4/$5 until. */
function sqlPageRange(time: string, id: string): string {
  return `(${time}, ${id}) >= ($2::timestamptz, $3::uuid) and (${time}, ${id}) < ($4::timestamptz, $5::uuid)`
}

/** The page's order and size ($6): one more row than the limit tells whether more follow. */
function sqlPageOrder(time: string, id: string): string {
  return `order by ${time}, ${id} limit $6`
}

/** Validated conversions, folded (docs/api/export.md, "Folding"); lists/conversions.ts says how. */
export const CONVERSIONS_PAGE: PreparedStatement = {
  name: 'dcgate_export_conversions_v5',
  // Planned per call: its joins' best plan depends on how many deliveries and orders the site has.
  // Only a conversion's own deliveries count (kind conversion): a refund told to a platform is a delivery row too.
  reusePlan: false,
  text: `select k.conversion_id as paging_id, c.id, true as validated, coalesce(c.standard_event, c.event) as event_name, r.provider,
      c.value, c.currency, c.order_id, c.country, c.consent = 'granted' as has_consent, f.refunded_at is not null as refunded, ${sqlTime('f.refunded_at')} as refunded_at, f.refunded_value,
      c.confirmation, r.http_status, ${sqlTime('k.created_at')} as created_at, r.id as delivery_id, c.source_event_type,
      c.session_id, c.user_id, c.content_name, c.content_category, r.received as events_received
    from (
      select distinct d.created_at, d.conversion_id from deliveries d
      where d.site_id = $1 and d.status = 'sent' and d.kind = 'conversion' and ${sqlPageRange('d.created_at', 'd.conversion_id')}
      order by d.created_at, d.conversion_id
    ) k
    join conversions c on c.id = k.conversion_id
    cross join lateral (
      select s.id, s.provider, s.http_status, (count(*) over ())::int as received from deliveries s
      where s.conversion_id = c.id and s.status = 'sent' and s.kind = 'conversion' order by s.sent_at nulls last, s.id limit 1
    ) r
    -- A refund marks every conversion of its order (core/delivery/queries/refunds.ts); one stored after it is read from the order.
    cross join lateral (
      select coalesce(c.refunded_at, (select min(o.refunded_at) from conversions o where o.site_id = $1 and o.order_id = c.order_id)) as refunded_at,
        coalesce(c.refunded_value, (select max(o.refunded_value) from conversions o where o.site_id = $1 and o.order_id = c.order_id)) as refunded_value
    ) f
    where not c.is_bot and c.consent <> 'denied' and (c.order_id is null or not exists (
      select 1 from conversions o
      where o.site_id = $1 and o.order_id = c.order_id and o.id <> c.id and not o.is_bot and o.consent <> 'denied'
        and (o.trust = 'trusted' or c.trust = 'public')
        and exists (select 1 from deliveries od where od.conversion_id = o.id and od.status = 'sent' and od.kind = 'conversion'
          and (od.created_at, od.conversion_id) < (k.created_at, k.conversion_id))))
    ${sqlPageOrder('k.created_at', 'k.conversion_id')}`,
}

/** People the site identified by email, paged on `identified_at` (set once, at the first identification). */
export const IDENTIFIED_USERS_PAGE: PreparedStatement = {
  name: 'dcgate_export_identified_users_v1',
  text: `select u.id as paging_id, u.id, u.email, u.source, u.email_risk_score, u.email_risk_label, u.is_disposable, u.ip_country,
      u.ip_is_vpn, ${sqlTime('u.identified_at')} as identified_at
    from identified_users u
    where u.site_id = $1 and ${sqlPageRange('u.identified_at', 'u.id')}
    ${sqlPageOrder('u.identified_at', 'u.id')}`,
}

/** One row per visit, paged on its start time over the (site_id, started_at, id) index. */
export const SESSIONS_PAGE: PreparedStatement = {
  name: 'dcgate_export_sessions_v2',
  text: `select v.id as paging_id, v.session_id, ${sqlTime('v.started_at')} as start_time, ${sqlTime('v.ended_at')} as end_time,
      v.duration_ms::float8 as duration_ms, v.page_count, v.country, v.city, v.ip_address, v.is_vpn, v.is_proxy, v.is_tor,
      v.user_agent, v.platform, v.is_bot, v.bot_reasons, v.referrer, v.landing_url, v.consent_purposes
    from visits v
    where v.site_id = $1 and ${sqlPageRange('v.started_at', 'v.id')}
    ${sqlPageOrder('v.started_at', 'v.id')}`,
}

/** Visits ruled bots, paged on the visit's start time over the partial index of bot visits. */
export const BOT_DETECTIONS_PAGE: PreparedStatement = {
  name: 'dcgate_export_bot_detections_v1',
  text: `select v.id as paging_id, v.session_id, v.bot_reasons, v.user_agent, v.country, v.ip_address, v.is_vpn, v.is_proxy,
      ${sqlTime('v.started_at')} as detected_at
    from visits v
    where v.site_id = $1 and v.is_bot and ${sqlPageRange('v.started_at', 'v.id')}
    ${sqlPageOrder('v.started_at', 'v.id')}`,
}

/** Visits behind a VPN, proxy or Tor, paged on the visit's start time over their partial index. */
export const VPN_PROXY_DETECTIONS_PAGE: PreparedStatement = {
  name: 'dcgate_export_vpn_proxy_detections_v1',
  // The condition is written as the partial index's predicate, so the planner uses that index.
  text: `select v.id as paging_id, v.session_id, v.ip_address, v.is_vpn, v.is_proxy, v.is_tor, v.isp, v.organization, v.country,
      ${sqlTime('v.started_at')} as detected_at
    from visits v
    where v.site_id = $1 and (v.is_vpn or v.is_proxy or v.is_tor) and ${sqlPageRange('v.started_at', 'v.id')}
    ${sqlPageOrder('v.started_at', 'v.id')}`,
}

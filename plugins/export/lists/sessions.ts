import { sqlTime } from '../paging/instant.ts'
import { sqlPageOrder, sqlPageRange, type PagedList } from '../paging/page.ts'
import type { Horizon } from '../paging/horizon.ts'
import { SessionRecord } from '../fields.ts'

/** One row per visit, paged on its start time over the (site_id, started_at, id) index. */
export function sessionsList(horizon: Horizon): PagedList {
  return {
    path: '/api/v1/export/sessions',
    summary: 'Sessions',
    description: 'One record per visit, ordered by start time. Page with `since`, `until` and `limit`; pass `next_since` as `since` to continue.',
    record: SessionRecord,
    timeField: 'start_time',
    horizon,
    statement: {
      name: 'dcgate_export_sessions_v1',
      text: `select v.id as paging_id, v.session_id, ${sqlTime('v.started_at')} as start_time, ${sqlTime('v.ended_at')} as end_time,
          v.duration_ms::float8 as duration_ms, v.page_count, v.country, v.city, v.ip_address, v.is_vpn, v.is_proxy, v.is_tor,
          v.user_agent, v.platform, v.is_bot, v.bot_reasons, v.referrer, v.landing_url
        from visits v
        where v.site_id = $1 and ${sqlPageRange('v.started_at', 'v.id')}
        ${sqlPageOrder('v.started_at', 'v.id')}`,
    },
  }
}

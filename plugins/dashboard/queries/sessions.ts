/** The Sessions page: visits with their bot and network verdicts, newest first. No IP address or user agent. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { PAGE_ROWS, sqlBefore, sqlIsoTime, type PageEnd } from './paging.ts'

export interface SessionRow {
  id: string
  paging_time: string
  ended_at: string | null
  duration_ms: number | null
  page_count: number
  country: string | null
  platform: string | null
  landing_url: string | null
  referrer: string | null
  is_bot: boolean
  bot_reasons: string[] | null
  is_vpn: boolean
  is_proxy: boolean
  is_tor: boolean
}

/** $1 site, $2/$3 page end, $4 rows; over the (site_id, started_at, id) index, as the export pages it. */
const SESSIONS_PAGE: PreparedStatement = {
  name: 'dashboard_sessions_page_v1',
  text: `select v.id, ${sqlIsoTime('v.started_at')} as paging_time, ${sqlIsoTime('v.ended_at')} as ended_at, v.duration_ms::float8 as duration_ms,
      v.page_count, v.country, v.platform, v.landing_url, v.referrer, v.is_bot, v.bot_reasons, v.is_vpn, v.is_proxy, v.is_tor
    from visits v
    where v.site_id = $1 and ${sqlBefore('v.started_at', 'v.id', 2)}
    order by v.started_at desc, v.id desc limit $4`,
}

export function listSessionsPage(prepared: RunPrepared, siteId: string, end: PageEnd | null): Promise<SessionRow[]> {
  return prepared<SessionRow>(SESSIONS_PAGE, [siteId, end?.time ?? null, end?.id ?? null, PAGE_ROWS + 1])
}

/** The Identified users page: people the site identified by email, newest identification first. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { PAGE_ROWS, sqlBefore, sqlIsoTime, type PageEnd } from './paging.ts'

export interface IdentifiedUserRow {
  id: string
  paging_time: string
  /** In clear as capture stores it; the page shows it masked. */
  email: string
  source: string
  email_risk_score: number | null
  email_risk_label: string | null
  is_disposable: boolean | null
  ip_country: string | null
  ip_is_vpn: boolean | null
  last_seen_at: string | null
}

/** $1 site, $2/$3 page end, $4 rows; over the (site_id, identified_at, id) index, as the export pages it. */
const USERS_PAGE: PreparedStatement = {
  name: 'dashboard_users_page_v1',
  text: `select u.id, ${sqlIsoTime('u.identified_at')} as paging_time, u.email, u.source, u.email_risk_score, u.email_risk_label, u.is_disposable,
      u.ip_country, u.ip_is_vpn, ${sqlIsoTime('u.last_seen_at')} as last_seen_at
    from identified_users u
    where u.site_id = $1 and ${sqlBefore('u.identified_at', 'u.id', 2)}
    order by u.identified_at desc, u.id desc limit $4`,
}

export function listUsersPage(prepared: RunPrepared, siteId: string, end: PageEnd | null): Promise<IdentifiedUserRow[]> {
  return prepared<IdentifiedUserRow>(USERS_PAGE, [siteId, end?.time ?? null, end?.id ?? null, PAGE_ROWS + 1])
}

/** The Held leads page: a site's conversions waiting for qualification, newest first. Actions go to the release plugin. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { PAGE_ROWS, sqlBefore, sqlIsoTime, type PageEnd } from './paging.ts'

export interface HeldLeadRow {
  id: string
  paging_time: string
  event: string
  /** The normalised email in clear (shown masked); null when the lead's email arrived hashed. */
  email: string | null
  has_email_hash: boolean
  /** Names of the click ids the lead carries (gclid, fbc…), never their values. */
  click_ids: string[]
}

/**
 * $1 site, $2/$3 page end, $4 rows. Rows still `held` and not past the release plugin's expiry ($5 days): an expired
 * one can no longer be released, even before the hourly job marks it.
 */
const HELD_PAGE: PreparedStatement = {
  name: 'dashboard_held_page_v1',
  reusePlan: false,
  text: `select id, ${sqlIsoTime('created_at')} as paging_time, event, held_email as email, identity ? 'email' as has_email_hash,
      array(select jsonb_object_keys(click_ids) order by 1) as click_ids
    from conversions
    where site_id = $1 and state = 'held' and created_at > now() - make_interval(days => $5::int) and ${sqlBefore('created_at', 'id', 2)}
    order by created_at desc, id desc limit $4`,
}

export function listHeldPage(prepared: RunPrepared, siteId: string, end: PageEnd | null, expireAfterDays: number): Promise<HeldLeadRow[]> {
  return prepared<HeldLeadRow>(HELD_PAGE, [siteId, end?.time ?? null, end?.id ?? null, PAGE_ROWS + 1, expireAfterDays])
}

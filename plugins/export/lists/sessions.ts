import { SESSIONS_PAGE } from '../queries/lists.ts'
import type { PagedList } from '../paging/page.ts'
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
    statement: SESSIONS_PAGE,
  }
}

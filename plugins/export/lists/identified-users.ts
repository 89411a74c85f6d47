import { IDENTIFIED_USERS_PAGE } from '../queries/lists.ts'
import type { PagedList } from '../paging/page.ts'
import type { Horizon } from '../paging/horizon.ts'
import { IdentifiedUserRecord } from '../fields.ts'

/** People the site identified by email, paged on `identified_at` (set once, at the first identification). */
export function identifiedUsersList(horizon: Horizon): PagedList {
  return {
    path: '/api/v1/export/identified-users',
    summary: 'Identified users',
    description: 'One record per person the site identified by email, ordered by `identified_at`. Paged like sessions.',
    record: IdentifiedUserRecord,
    timeField: 'identified_at',
    horizon,
    statement: IDENTIFIED_USERS_PAGE,
  }
}

import { sqlTime } from '../paging/instant.ts'
import { sqlPageOrder, sqlPageRange, type PagedList } from '../paging/page.ts'
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
    statement: {
      name: 'dcgate_export_identified_users_v1',
      text: `select u.id as paging_id, u.id, u.email, u.source, u.email_risk_score, u.email_risk_label, u.is_disposable, u.ip_country,
          u.ip_is_vpn, ${sqlTime('u.identified_at')} as identified_at
        from identified_users u
        where u.site_id = $1 and ${sqlPageRange('u.identified_at', 'u.id')}
        ${sqlPageOrder('u.identified_at', 'u.id')}`,
    },
  }
}

/** The Overview's sales figures: conversions and revenue per UTC day, event and currency. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'

export interface SalesRow { day: string, event: string, currency: string | null, conversions: number, revenue: number }

/**
 * $1 site, $2 days. Conversions taken for delivery (accepted, or held then released), per UTC day, event and
 * currency; an order received twice for one event (the pixel's copy and the shop's webhook) counts once, the trusted
 * copy's value winning. Revenue is the value as received, before refunds.
 */
const SALES: PreparedStatement = {
  name: 'dashboard_overview_sales_v1',
  reusePlan: false,
  text: `with received as (
      select distinct on (event, coalesce(order_id, id::text)) created_at, event, value, currency from conversions
      where site_id = $1 and state in ('accepted', 'released')
        and created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - make_interval(days => $2::int - 1)
      order by event, coalesce(order_id, id::text), (trust = 'trusted') desc, created_at
    )
    select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day, event, currency,
      count(*)::int as conversions, coalesce(sum(value), 0)::float8 as revenue
    from received group by 1, 2, 3 order by 1, 2, 3`,
}

export function salesPerDayAndEvent(prepared: RunPrepared, siteId: string, days: number): Promise<SalesRow[]> {
  return prepared<SalesRow>(SALES, [siteId, days])
}

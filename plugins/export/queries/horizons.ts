import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { sqlTime } from '../paging/instant.ts'

/**
 * Oldest start of a transaction still running in this database, other than ours. A record's `now()` default is
 * its transaction's start, and the transaction may commit long after: records stamped before it may yet appear.
 * Other roles' transactions show no start (unless we may read all stats); dcgate's own writers are our role.
 */
const OLDEST_RUNNING = `(select min(xact_start) from pg_stat_activity
  where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend')`

/** $1 lag in ms. */
const CLOCK_HORIZON: PreparedStatement = {
  name: 'dcgate_export_horizon_v1',
  text: `select ${sqlTime(`least(now() - make_interval(secs => $1::float8 / 1000), ${OLDEST_RUNNING})`)} as horizon`,
}

/** Rows of the walk below; past it the horizon stops at the last one walked (earlier than needed, never later). */
const WALK = 1000

/**
 * $1 lag in ms, $2 site, $3 how long a delivery may still be retried, in seconds. A conversion is listed once a
 * delivery is sent, at its deliveries' `created_at`: the horizon also stays before the oldest conversion still in
 * delivery (pending or retrying, or held by an inline attempt: `all_deliveries`) with nothing sent yet, so it cannot
 * turn up behind a client that paged past it.
 */
const DELIVERY_HORIZON: PreparedStatement = {
  name: 'dcgate_export_delivery_horizon_v3',
  text: `with walk as materialized (
      select d.created_at, d.conversion_id from all_deliveries d
      where d.site_id = $2 and d.status in ('pending', 'retrying') and d.kind = 'conversion' and d.created_at > now() - make_interval(secs => $3::float8)
      order by d.created_at limit ${WALK}
    )
    select ${sqlTime(`least(now() - make_interval(secs => $1::float8 / 1000), ${OLDEST_RUNNING},
      (select min(w.created_at) from walk w where not exists (select 1 from deliveries s where s.conversion_id = w.conversion_id and s.status = 'sent' and s.kind = 'conversion')),
      (select max(w.created_at) from walk w having count(*) >= ${WALK}))`)} as horizon`,
}

export type HorizonRow = { horizon: string }

export function readClockHorizon(sql: RunPrepared, lagMs: number): Promise<HorizonRow[]> {
  return sql<HorizonRow>(CLOCK_HORIZON, [lagMs])
}

export function readDeliveryHorizon(sql: RunPrepared, lagMs: number, siteId: string, retryWindowSeconds: number): Promise<HorizonRow[]> {
  return sql<HorizonRow>(DELIVERY_HORIZON, [lagMs, siteId, retryWindowSeconds])
}

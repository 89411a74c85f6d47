/** The live events' SQL: a batch written at once, the newest read with filters, the rest pruned. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { sqlIsoTime } from './paging.ts'

/** One answered request as stored (plugins/dashboard/live/recorder.ts builds it). */
export interface LiveRow {
  siteId: string
  /** When it was answered, ms since the epoch; the fraction (microseconds) orders requests of one millisecond. */
  atMs: number
  kind: string
  method: string
  route: string
  source: string | null
  status: number
  code: string | null
  reason: string | null
  refused: number | null
}

/** Every buffered request in one statement: one array per column. */
const INSERT: PreparedStatement = {
  name: 'dashboard_live_insert_v2',
  text: `insert into dashboard_live_requests (site_id, at, kind, method, route, source, status, code, reason, refused)
    select site_id, to_timestamp(at_ms / 1000), kind, method, route, source, status, code, reason, refused
    from unnest($1::text[], $2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::int[])
      as r(site_id, at_ms, kind, method, route, source, status, code, reason, refused)`,
}

export async function insertLive(prepared: RunPrepared, rows: readonly LiveRow[]): Promise<void> {
  if (!rows.length) return
  const column = <K extends keyof LiveRow>(key: K) => rows.map((row) => row[key])
  await prepared(INSERT, [column('siteId'), column('atMs'), column('kind'), column('method'), column('route'), column('source'), column('status'), column('code'), column('reason'), column('refused')])
}

export interface ShownLive { id: string, at: string, kind: string, method: string, route: string, source: string | null, status: number, code: string | null, reason: string | null, refused: number | null }

/**
 * $1 site, $2 kind or '' for any, $3 outcome ('accepted', 'refused' or '' for any), $4 rows. Newest first. Refused:
 * answered 4xx/5xx, or a 200 whose parts were refused (a Segment batch's messages).
 */
const LIST: PreparedStatement = {
  name: 'dashboard_live_list_v1',
  reusePlan: false,
  text: `select id, ${sqlIsoTime('at')} as at, kind, method, route, source, status, code, reason, refused from dashboard_live_requests
    where site_id = $1 and ($2 = '' or kind = $2)
      and ($3 = '' or ($3 = 'refused') = (status >= 400 or coalesce(refused, 0) > 0))
    order by dashboard_live_requests.at desc, id desc limit $4`,
}

export function listLive(prepared: RunPrepared, siteId: string, filter: { kind: string, outcome: string }, rows: number): Promise<ShownLive[]> {
  return prepared<ShownLive>(LIST, [siteId, filter.kind, filter.outcome, rows])
}

/** $1 rows kept per site, $2 days kept at most: everything older or past the newest $1 of its site goes. */
const PRUNE: PreparedStatement = {
  name: 'dashboard_live_prune_v1',
  reusePlan: false,
  timeoutMs: 60_000,
  text: `delete from dashboard_live_requests where at < now() - make_interval(days => $2::int) or id in (
      select id from (select id, row_number() over (partition by site_id order by at desc, id desc) as n from dashboard_live_requests) ranked where n > $1)`,
}

export async function pruneLive(prepared: RunPrepared, keep: number, days: number): Promise<void> {
  await prepared(PRUNE, [keep, days])
}

/** The delivery worker's statements: claim due rows, read a stored conversion, record an attempt. */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import type { EventFields } from '../rows.ts'
import { receiptsInsert, type NewReceipt } from './diagnostics.ts'

/** A delivery held for an attempt. `attempts` already counts this one: the claim (or the inline insert) counted it. */
export interface ClaimedDelivery {
  id: string, conversion_id: string, site_id: string, provider: string, attempts: number
  /** `adjustment` for a refund (core/delivery/adjust.ts); absent or `conversion` for the conversion itself. */
  kind?: string
  adjustment?: StoredAdjustment | null
  /** An adjustment's view of its conversion's own delivery to the same platform (sent, pending, failed…). */
  conversion_status?: string | null
  /** Held by its conversion for the inline attempt, not a row yet (queries/intake.ts). */
  held?: boolean
}

/** An adjustment as stored in `deliveries.adjustment` (times as ISO text). */
export interface StoredAdjustment { type: 'retraction' | 'restatement', refundId: string, at: string, value?: number, currency?: string }

/**
 * What the claims return: the row, and for an adjustment its refund and how its conversion's delivery stands (one an
 * inline attempt still holds counts as pending: `all_deliveries`).
 */
const CLAIMED = `returning id, conversion_id, site_id, provider, attempts, kind, adjustment,
      (select o.status from all_deliveries o where deliveries.kind = 'adjustment' and o.conversion_id = deliveries.conversion_id
        and o.provider = deliveries.provider and o.kind = 'conversion' limit 1) as conversion_status`

/**
 * $1 lease in seconds, $2 at most this many rows, $3 site, $4 provider. Claims due deliveries of one platform account
 * (any instance, never two at once: skip locked) and counts the attempt at once, so one cut short by a crash (kill -9
 * before its outcome was recorded) shows in the report.
 */
const CLAIM_DUE: PreparedStatement = {
  name: 'dcgate_claim_due_v4',
  // Planned per call, as before it was prepared: the best plan follows how many rows are due.
  reusePlan: false,
  text: `update deliveries set locked_until = now() + make_interval(secs => $1::int), attempts = attempts + 1, updated_at = now()
    where id in (select id from deliveries where status in ('pending', 'retrying') and next_attempt_at <= now()
      and site_id = $3 and provider = $4
      and (locked_until is null or locked_until < now()) order by next_attempt_at limit $2 for update skip locked)
    ${CLAIMED}`,
}

export function claimDueDeliveries(prepared: RunPrepared, leaseSeconds: number, limit: number, account: { siteId: string, provider: string }): Promise<ClaimedDelivery[]> {
  return prepared<ClaimedDelivery>(CLAIM_DUE, [leaseSeconds, limit, account.siteId, account.provider])
}

/**
 * $1 lease in seconds, $2 at most this many rows, $3 the configured accounts as `site_id:provider`. Claims due
 * deliveries of a platform no longer configured for their site, so they end failed instead of waiting for ever.
 */
const CLAIM_ORPHANS: PreparedStatement = {
  name: 'dcgate_claim_orphans_v3',
  reusePlan: false,
  text: `update deliveries set locked_until = now() + make_interval(secs => $1::int), attempts = attempts + 1, updated_at = now()
    where id in (select id from deliveries where status in ('pending', 'retrying') and next_attempt_at <= now()
      and site_id || ':' || provider <> all($3::text[])
      and (locked_until is null or locked_until < now()) order by next_attempt_at limit $2 for update skip locked)
    ${CLAIMED}`,
}

export function claimOrphanDeliveries(prepared: RunPrepared, leaseSeconds: number, limit: number, configured: readonly string[]): Promise<ClaimedDelivery[]> {
  return prepared<ClaimedDelivery>(CLAIM_ORPHANS, [leaseSeconds, limit, configured])
}

/** A stored conversion as the worker reads it back to send. */
export type StoredConversion = EventFields & {
  id: string
  /** The source of a trusted conversion with the same messageId, for a public one. */
  superseded_by: string | null
  /** `released` for a held lead the CRM qualified, with the release time in `resolved_at`. */
  state?: string
  resolved_at?: Date | string | null
  /** When its IP address and user agent were erased (core/delivery/clear-fields.ts); null while kept. */
  clear_erased_at?: Date | string | null
}

/**
 * $1 conversion ids. The stored conversions, each with, for a public one, the source of a trusted conversion that
 * took its messageId meanwhile (it arrived at the same moment as the intake's lookup, or the public one was held
 * and released later): not sent. Every column (`c.*`), so a column `toEvent` starts to read is read back here too.
 */
const READ_CONVERSIONS: PreparedStatement = {
  name: 'dcgate_read_conversions_v1',
  text: `select c.*,
      (select t.source from conversions t where c.trust = 'public' and t.site_id = c.site_id
        and t.message_id = c.message_id and t.trust = 'trusted' limit 1) as superseded_by
    from conversions c where c.id = any($1::uuid[])`,
}

export async function readConversions(prepared: RunPrepared, ids: readonly string[]): Promise<Map<string, StoredConversion>> {
  const rows = ids.length ? await prepared<StoredConversion>(READ_CONVERSIONS, [[...new Set(ids)]]) : []
  return new Map(rows.map((row) => [row.id, row]))
}

/** A delivery's state after an attempt, as written back. */
export interface AttemptUpdate {
  id: string, conversion_id: string, provider: string, status: string, attempts: number, http_status: number | null
  error: string | null, duration_ms: number | null, next_attempt_at: string | null, sent_at: string | null
  /** Held by its conversion for the inline attempt (no row yet): the record inserts its row. */
  held?: boolean
  /** Which rule shaped the request, when it is not the usual one (late-lead.ts); absent: none. */
  note?: string | null
  /** The platform's receipt for a sent request it judges later (core/delivery/diagnostics.ts), noted with the record. */
  receipt?: NewReceipt
}

/**
 * Every delivery of an attempt: $1 the new states as JSON, $2 the ids of rows to update, $3 their conversions' ids,
 * $4 the receipts of the sent ones a platform judges later (one statement for both: measured, receipts were 0.16–0.2
 * statements per conversion of their own, docs/architecture.md "Cost of a conversion in PostgreSQL").
 * - A row the worker claimed is updated. A delivery its conversion held for the inline attempt is inserted, once, in
 *   its final state (`on conflict` updates it instead, should the sweep have written it as pending meanwhile: a
 *   lease ran out before the attempt ended); none is inserted for a conversion no longer there (a withdrawal).
 * - The conversion lets go of its held deliveries once every one of them has a row (written now or before), and its
 *   IP, user agent and clear traits are cleared when every delivery ended sent or skipped: none may be attempted
 *   again. A failed one keeps them for a retry within delivery.retryWindowDays (core/delivery/clear-fields.ts). Rows
 *   written by this statement are not visible to its own reads, so both checks count the new states ($1) too.
 * - It commits without waiting for the WAL flush (`synchronous_commit` off for this transaction only). Losing it
 *   in a database crash leaves the deliveries claimed or held; when the lease runs out they are attempted again, and
 *   every platform drops the repeat by its event id. The conversion's own insert stays a synchronous commit: that is
 *   what "accepted, never lost" rests on. Measured: about a quarter more conversions/s on PostgreSQL.
 * - The id arrays (`= any(...)`) give the planner the real row count, where json_to_recordset's guess of 100 made
 *   it hash-join a sequential scan of deliveries (cost growing with the table).
 * - "Not ended" is written `not in (ended states)` so the planner does not walk the (status, next_attempt_at)
 *   index and its dead entries.
 */
const RECORD_ATTEMPT: PreparedStatement = {
  name: 'dcgate_record_attempt_v8',
  // Its generic plan, made on a fresh database, kept a sequential scan of deliveries as the table grew (761 blocks a
  // call): it is made again each time a table doubles. Planned per call, it cost a third of its CPU (plan-generations.ts).
  planFollows: ['deliveries', 'conversions'],
  // Linear in the size of the record: a record gathers every attempt that ended while the one before it ran, 300
  // conversions at a time under load. The conversions are read once, by their key (`cs`), and each one's states are
  // counted once (`vc`): counting them with a scan of `v` per conversion, and finding each conversion again per
  // delivery, made a record of 988 deliveries take 261 ms (docs/architecture.md, "Statements that grew faster than their batch").
  text: `with async_commit as materialized (select set_config('synchronous_commit', 'off', true)),
    v as (
      select x.* from async_commit, json_to_recordset($1::json) as x(id uuid, conversion_id uuid, provider text, held boolean, status text,
        attempts int, http_status int, error text, duration_ms int, next_attempt_at timestamptz, sent_at timestamptz, note text)
    ), vc as materialized (
      select conversion_id, count(*) filter (where held) as held, bool_and(status in ('sent', 'skipped')) as ended_well, array_agg(id) as ids
      from v group by conversion_id
    ), cs as materialized (
      select c.id, c.site_id, c.created_at, c.inline_deliveries from unnest($3::uuid[]) as k(id) join conversions c on c.id = k.id
    ), u as (
      update deliveries d set status = v.status, attempts = v.attempts, http_status = v.http_status, error = v.error,
        last_duration_ms = v.duration_ms, locked_until = null, next_attempt_at = coalesce(v.next_attempt_at, now()),
        sent_at = v.sent_at, note = v.note, updated_at = now()
      from v where d.id = any($2::uuid[]) and d.id = v.id and v.held is not true returning d.id
    ), i as (
      insert into deliveries (id, conversion_id, site_id, provider, status, attempts, http_status, error, last_duration_ms,
        next_attempt_at, sent_at, note, created_at, updated_at)
      select v.id, cs.id, cs.site_id, v.provider, v.status, v.attempts, v.http_status, v.error, v.duration_ms,
        coalesce(v.next_attempt_at, now()), v.sent_at, v.note, cs.created_at, now()
      from v join cs on cs.id = v.conversion_id where v.held
      on conflict (id) do update set status = excluded.status, attempts = excluded.attempts, http_status = excluded.http_status,
        error = excluded.error, last_duration_ms = excluded.last_duration_ms, locked_until = null,
        next_attempt_at = excluded.next_attempt_at, sent_at = excluded.sent_at, note = excluded.note, updated_at = now()
    ), receipts as (
      ${receiptsInsert(4)}
    ), s as materialized (
      select cs.id,
        -- Usually every held delivery of the conversion is in this record; only when not are the others looked up.
        (jsonb_array_length(coalesce(cs.inline_deliveries, '[]')) = coalesce(vc.held, 0)
          or not exists (select 1 from jsonb_to_recordset(cs.inline_deliveries) as h(id uuid)
            where h.id <> all(coalesce(vc.ids, '{}')) and not exists (select 1 from deliveries o where o.id = h.id))) as recorded,
        coalesce(vc.ended_well, true)
          and not exists (select 1 from deliveries o where o.conversion_id = cs.id and o.status not in ('sent', 'skipped')
            and o.id <> all(coalesce(vc.ids, '{}'))) as settled
      from cs left join vc on vc.conversion_id = cs.id
    )
    update conversions c set inline_until = null, inline_deliveries = null,
      ip = case when s.settled then null else c.ip end, user_agent = case when s.settled then null else c.user_agent end,
      clear_traits = case when s.settled then null else c.clear_traits end,
      clear_erased_at = case when s.settled and (c.ip is not null or c.user_agent is not null or c.clear_traits is not null) then now() else c.clear_erased_at end
    from s where c.id = s.id and s.recorded
      and (c.inline_until is not null or (s.settled and (c.ip is not null or c.user_agent is not null or c.clear_traits is not null)))`,
}

export async function recordAttempt(prepared: RunPrepared, updates: readonly AttemptUpdate[]): Promise<void> {
  const receipts = updates.flatMap((u) => (u.receipt ? [u.receipt] : []))
  const rows = updates.flatMap((u) => (u.held ? [] : [u.id]))
  await prepared(RECORD_ATTEMPT, [JSON.stringify(updates), uuidArray(rows), uuidArray(new Set(updates.map((u) => u.conversion_id))), JSON.stringify(receipts)])
}

/**
 * A uuid array in PostgreSQL's text form (`{a,b}`), for ids read from the database: a uuid needs no quoting, and
 * node-postgres quoted and escaped each element of a JS array with two regular expressions (nine per conversion here).
 */
function uuidArray(ids: Iterable<string>): string {
  return `{${[...ids].join(',')}}`
}

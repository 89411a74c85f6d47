import type { PreparedStatement, RunPrepared } from '../../core/db/prepared.ts'
import { rowsOf, upsertOf, valuesOf, type RowOf } from './store/columns.ts'
import {
  EVENT_COLUMNS, IDENTIFIED_USER_COLUMNS, IDENTIFIED_USER_COMPUTED_COLUMNS, SESSION_COLUMNS, VISIT_COLUMNS, VISIT_COMPUTED_COLUMNS,
} from './store/tables.ts'

/** Capture's SQL: the writer's flush, identifications, the pixel's look-up and retention, as named functions. */

/** How long after a hit the same hit sent again (after consent, or retried) is still recognised as stored. */
const RESENT_WITHIN_MS = 86_400_000

const EVENT_NAMES = Object.keys(EVENT_COLUMNS).filter((name) => name !== 'received_at')

/**
 * One statement writes a whole flush: the page events (each once: `id` is made when the hit arrives, so a
 * journal replayed after a crash inserts nothing twice), then every visit, counting only the events this
 * statement inserted. Atomic, so a replay after a commit adds nothing.
 *
 * page_events is partitioned by received_at, so its key is (id, received_at). A hit sent again arrives with a new
 * received_at: it takes the stored copy's ($3…$4: the partitions of the last day only), or the first copy's in this
 * flush, and so meets it as before.
 */
const WRITE_HITS: PreparedStatement = {
  name: 'dcgate_capture_write_batch_v6',
  // Planned per call: its row counts change with every flush, and $3…$4 choose the partitions.
  reusePlan: false,
  text: `
with sent as (${rowsOf(EVENT_COLUMNS, '$1')}), hits as (
  select ${EVENT_NAMES.map((name) => `s.${name}`).join(', ')}, coalesce(k.received_at, min(s.received_at) over (partition by s.id)) as received_at
  from sent s left join lateral (
    select v.received_at from page_events v where v.id = s.id and v.received_at >= $3 and v.received_at < $4 order by v.received_at limit 1
  ) k on true
), inserted as (
  ${upsertOf({
    table: 'page_events',
    columns: EVENT_COLUMNS,
    from: 'hits s',
    key: ['id', 'received_at'],
    // The same hit again: a replayed journal changes nothing; a page view first counted without identifiers and
    // sent again once consent was given is linked to its visit (and counted there) instead of stored twice.
    where: 'v.session_id is null and excluded.session_id is not null',
  })}
  returning site_id, session_id, kind, occurred_at
), counts as (
  select site_id, session_id, count(*) filter (where kind = 'pageview') as pages, count(*) filter (where kind = 'event') as events,
    min(occurred_at) as first_at, max(occurred_at) as last_at
  from inserted where session_id is not null group by site_id, session_id
), seen as (${rowsOf(VISIT_COLUMNS, '$2')})
${upsertOf({
  table: 'visits',
  columns: { ...VISIT_COLUMNS, ...VISIT_COMPUTED_COLUMNS },
  from: 'seen s left join counts c on c.site_id = s.site_id and c.session_id = s.session_id',
  key: ['site_id', 'session_id'],
})}`,
}

/** Page events and visits as jsonb arrays of value tuples in column order (store/columns.ts). */
export async function writeHits(prepared: RunPrepared, events: Buffer, visits: Buffer): Promise<void> {
  const now = Date.now()
  await prepared(WRITE_HITS, [events, visits, new Date(now - RESENT_WITHIN_MS), new Date(now + RESENT_WITHIN_MS)])
}

const WITHDRAW: PreparedStatement = {
  name: 'dcgate_capture_withdraw_v2',
  reusePlan: false,
  text: `update visits v set consent = 'denied', click_ids = '{}'::jsonb, ip_address = null, user_agent = null, device_hash = null, updated_at = now()
    from (${rowsOf(SESSION_COLUMNS, '$1')}) as w
    where v.site_id = w.site_id and v.session_id = w.session_id`,
}

/** Visits whose visitor withdrew consent (JSON text of session tuples): the refusal stays, the identifiers go. */
export async function withdrawVisits(prepared: RunPrepared, sessions: string): Promise<void> {
  await prepared(WITHDRAW, [sessions])
}

/** The identities one visit keeps: people share a computer, a form is filled in twice; more is a page in a loop. */
export const MAX_VISIT_IDENTITIES = 20

export type IdentifiedUserRow = RowOf<typeof IDENTIFIED_USER_COLUMNS>

const UPSERT_IDENTIFIED_USER: PreparedStatement = {
  name: 'dcgate_capture_identified_user_v1',
  text: upsertOf({ table: 'identified_users', columns: { ...IDENTIFIED_USER_COLUMNS, ...IDENTIFIED_USER_COMPUTED_COLUMNS }, key: ['site_id', 'email_hash'] }),
}

/** One identified user per site and email: seen again, it is updated (a risk score it had stays unless a new one came). */
export async function upsertIdentifiedUser(prepared: RunPrepared, row: IdentifiedUserRow): Promise<void> {
  await prepared(UPSERT_IDENTIFIED_USER, valuesOf(IDENTIFIED_USER_COLUMNS, row))
}

export interface VisitIdentity {
  siteId: string
  sessionId: string
  visitorId: string
  email: string
  emailHash: string
  phone: string | null
  firstName: string | null
  lastName: string | null
  consent: string
}

const IDENTIFY_VISIT: PreparedStatement = {
  name: 'dcgate_capture_identify_visit_v1',
  text: `insert into visits as v (id, site_id, session_id, visitor_id, email, email_hash, email_hashes, phone, first_name, last_name, identified_at, consent)
    values (gen_random_uuid(), $1, $2, $3, $4, $5, array[$6]::text[], $7, $8, $9, now(), $10)
    on conflict (site_id, session_id) do update set email = excluded.email, email_hash = excluded.email_hash,
      email_hashes = case when v.email_hashes @> excluded.email_hashes then v.email_hashes else coalesce(v.email_hashes, '{}') || excluded.email_hashes end,
      phone = coalesce(excluded.phone, v.phone), first_name = coalesce(excluded.first_name, v.first_name),
      last_name = coalesce(excluded.last_name, v.last_name), identified_at = coalesce(v.identified_at, now()), updated_at = now()
    where v.email_hashes is null or v.email_hashes @> excluded.email_hashes or cardinality(v.email_hashes) < ${MAX_VISIT_IDENTITIES}`,
}

/**
 * The visit gets the identity (created if its hits still wait in the capture buffer: they merge into it). It keeps
 * every identity it is given (email_hashes), so conversions and erasure find it by any of them; past
 * MAX_VISIT_IDENTITIES a further one is not put on it (a page calling identifyUser in a loop).
 */
export async function identifyVisit(prepared: RunPrepared, i: VisitIdentity): Promise<void> {
  await prepared(IDENTIFY_VISIT, [i.siteId, i.sessionId, i.visitorId, i.email, i.emailHash, i.emailHash, i.phone, i.firstName, i.lastName, i.consent])
}

const VISIT_CONTACT: PreparedStatement = {
  name: 'dcgate_capture_visit_contact_v1',
  text: 'select email, phone from visits where site_id = $1 and session_id = $2',
}

/** The email and phone an identified visit was given, if any. */
export async function visitContact(prepared: RunPrepared, siteId: string, sessionId: string): Promise<{ email: string | null, phone: string | null } | undefined> {
  const [row] = await prepared<{ email: string | null, phone: string | null }>(VISIT_CONTACT, [siteId, sessionId])
  return row
}

/** Rows per retention statement: short statements, so the hot path's writes never wait long behind a delete. */
export const RETENTION_BATCH = 5000
/** A batch's delete may wait on locks and indexes of a busy table: longer than a request may take, bounded still. */
const DELETE_STATEMENT_MS = 60_000

/**
 * A table's old rows of one site ($1) before the cutoff ($2), by the time that ages them, oldest first, up to
 * RETENTION_BATCH; returns how many went. `skip locked`: two instances at once share the work instead of waiting.
 */
function deleteOlder(table: string, where: string, order: string, key = 'id'): (prepared: RunPrepared, siteId: string, cutoff: Date) => Promise<number> {
  const statement: PreparedStatement = {
    name: `dcgate_capture_expire_${table}_v2`,
    reusePlan: false,
    timeoutMs: DELETE_STATEMENT_MS,
    // The outer condition repeats the inner one so that, on the partitioned page_events, only the partitions
    // before the cutoff are read (the key includes received_at there: its primary key is per partition).
    text: `with gone as (delete from ${table} where site_id = $1 and ${where} and (${key}) in (
        select ${key} from ${table} where site_id = $1 and ${where} order by ${order} limit ${RETENTION_BATCH} for update skip locked) returning 1)
      select count(*)::int as n from gone`,
  }
  return async (prepared, siteId, cutoff) => (await prepared<{ n: number }>(statement, [siteId, cutoff]))[0]?.n ?? 0
}

/** What whole-partition drops (retention.ts) left: the rows of the partitions that straddle the cutoff, or of the default one. */
export const deleteOldPageEvents = deleteOlder('page_events', 'received_at < $2', 'received_at', 'id, received_at')
/** A visit is kept while any of it is newer than the cutoff (ended_at is null until its second hit). */
export const deleteOldVisits = deleteOlder('visits', 'started_at < $2 and coalesce(ended_at, started_at) < $2', 'started_at')
export const deleteOldIdentifiedUsers = deleteOlder('identified_users', 'last_seen_at < $2', 'last_seen_at')

import type { MerchantLogEntry } from '../entities.ts'
import type { Sql } from './one-off.ts'

/** A deletion_requests row as the statements here return it. */
export interface RequestRow {
  id: string
  site_id: string
  code: string
  source: 'public' | 'api'
  status: 'received' | 'processing' | 'completed'
  email: string | null
  masked_email: string
  received_at: Date
  completed_at: Date | null
  hard_purge_at: Date
  purged_at: Date | null
  integrations_affected: number
  session_records_anonymised: number
  completion_email_sent_at: Date | null
  merchant_log: MerchantLogEntry[]
}

const COLUMNS = `id, site_id, code, source, status, email, masked_email, received_at, completed_at, hard_purge_at, purged_at,
  integrations_affected, session_records_anonymised, completion_email_sent_at, merchant_log`

const log = (entries: readonly MerchantLogEntry[]) => JSON.stringify(entries)

/** Serialises requests for one (site, email key) until the transaction ends. */
export async function lockEmailKey(sql: Sql, lockName: string): Promise<void> {
  await sql(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [lockName])
}

export async function hasRecentRequest(sql: Sql, siteId: string, emailKey: string, windowHours: number): Promise<boolean> {
  const rows = await sql(
    `select id from deletion_requests where site_id = $1 and email_key = $2 and received_at > now() - make_interval(hours => $3::int) limit 1`,
    [siteId, emailKey, windowHours],
  )
  return rows.length > 0
}

export interface NewPublicRequest {
  siteId: string, code: string, email: string, emailKey: string, maskedEmail: string, tokenHash: string
  pageUrl: string | null, hardPurgeDays: number, log: MerchantLogEntry[]
}

export async function insertPublicRequest(sql: Sql, r: NewPublicRequest): Promise<RequestRow> {
  const [row] = await sql<RequestRow>(
    `insert into deletion_requests (id, site_id, code, source, status, email, email_key, masked_email, token_hash, page_url, received_at, hard_purge_at, merchant_log)
     values (gen_random_uuid(), $1, $2, 'public', 'received', $3, $4, $5, $6, $7, now(), now() + make_interval(days => $8::int), $9::jsonb)
     returning ${COLUMNS}`,
    [r.siteId, r.code, r.email, r.emailKey, r.maskedEmail, r.tokenHash, r.pageUrl, r.hardPurgeDays, log(r.log)],
  )
  return row!
}

export interface NewPrivateRequest { siteId: string, code: string, email: string, maskedEmail: string, hardPurgeDays: number, log: MerchantLogEntry[] }

export async function insertPrivateRequest(sql: Sql, r: NewPrivateRequest): Promise<RequestRow> {
  const [row] = await sql<RequestRow>(
    `insert into deletion_requests (id, site_id, code, source, status, email, masked_email, received_at, hard_purge_at, merchant_log)
     values (gen_random_uuid(), $1, $2, 'api', 'received', $3, $4, now(), now() + make_interval(days => $5::int), $6::jsonb)
     returning ${COLUMNS}`,
    [r.siteId, r.code, r.email, r.maskedEmail, r.hardPurgeDays, log(r.log)],
  )
  return row!
}

export const findRequestByCode = async (sql: Sql, code: string) =>
  (await sql<RequestRow>(`select ${COLUMNS} from deletion_requests where code = $1`, [code]))[0]

export const findRequestByTokenHash = async (sql: Sql, tokenHash: string) =>
  (await sql<RequestRow>(`select ${COLUMNS} from deletion_requests where token_hash = $1`, [tokenHash]))[0]

export const findRequestById = async (sql: Sql, id: string) =>
  (await sql<RequestRow>(`select ${COLUMNS} from deletion_requests where id = $1`, [id]))[0]

/** received → processing, or a processing request whose claim ran out; undefined when held or done. */
export async function claimErasure(sql: Sql, id: string, claimMinutes: number, entries: MerchantLogEntry[]): Promise<RequestRow | undefined> {
  const [row] = await sql<RequestRow>(
    `update deletion_requests set status = 'processing', processing_at = coalesce(processing_at, now()),
       locked_until = now() + make_interval(mins => $2::int), merchant_log = merchant_log || $3::jsonb
     where id = $1 and email is not null and (status = 'received' or (status = 'processing' and locked_until < now()))
     returning ${COLUMNS}`,
    [id, claimMinutes, log(entries)],
  )
  return row
}

/** processing → completed; a private request forgets the email, a public one keeps it under a fresh claim. */
export async function completeRequest(
  sql: Sql, id: string, counts: { integrations: number, sessions: number }, claimMinutes: number, entries: MerchantLogEntry[],
): Promise<RequestRow | undefined> {
  const [row] = await sql<RequestRow>(
    `update deletion_requests set status = 'completed', completed_at = now(), integrations_affected = $2, session_records_anonymised = $3,
       email = case when source = 'api' then null else email end,
       locked_until = case when source = 'api' then null else now() + make_interval(mins => $4::int) end,
       merchant_log = merchant_log || $5::jsonb
     where id = $1 and status = 'processing'
     returning ${COLUMNS}`,
    [id, counts.integrations, counts.sessions, claimMinutes, log(entries)],
  )
  return row
}

/** Keeps the request claimed for `minutes` (a retry waits that long) and logs why. */
export async function holdRequest(sql: Sql, id: string, minutes: number, entries: MerchantLogEntry[]): Promise<void> {
  await sql(
    `update deletion_requests set locked_until = now() + make_interval(mins => $2::int), merchant_log = merchant_log || $3::jsonb where id = $1`,
    [id, minutes, log(entries)],
  )
}

export async function markCompletionMailed(sql: Sql, id: string, entries: MerchantLogEntry[]): Promise<void> {
  await sql(
    `update deletion_requests set completion_email_sent_at = now(), email = null, locked_until = null, merchant_log = merchant_log || $2::jsonb
     where id = $1 and completion_email_sent_at is null`,
    [id, log(entries)],
  )
}

/** Holds the request for `minutes`; the failure is logged the first time only. */
export async function markCompletionMailFailed(sql: Sql, id: string, minutes: number, entries: MerchantLogEntry[]): Promise<void> {
  await sql(
    `update deletion_requests set locked_until = now() + make_interval(mins => $2::int),
       merchant_log = case when merchant_log @> '[{"event":"completion_email_failed"}]' then merchant_log else merchant_log || $3::jsonb end
     where id = $1`,
    [id, minutes, log(entries)],
  )
}

/** Logs the confirmation mail; a mail that failed also drops the email key (no 24-hour block). */
export async function markConfirmationMailed(sql: Sql, id: string, sent: boolean, entries: MerchantLogEntry[]): Promise<void> {
  await sql(
    `update deletion_requests set email_key = case when $2 then email_key end, merchant_log = merchant_log || $3::jsonb where id = $1`,
    [id, sent, log(entries)],
  )
}

/** Erasures left in processing whose claim ran out (a failed data store, a crash), oldest first. */
export async function findStalledErasures(sql: Sql, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    `select id from deletion_requests where status = 'processing' and locked_until < now() and email is not null and purged_at is null
     order by received_at limit $1`,
    [limit],
  )
  return rows.map((row) => row.id)
}

/** Claims completed public requests whose completion mail has not gone out, for `claimMinutes`. */
export async function claimCompletionMails(sql: Sql, claimMinutes: number, limit: number): Promise<RequestRow[]> {
  return sql<RequestRow>(
    `update deletion_requests set locked_until = now() + make_interval(mins => $1::int)
     where id in (
       select id from deletion_requests
       where status = 'completed' and source = 'public' and email is not null and completion_email_sent_at is null
         and purged_at is null and (locked_until is null or locked_until < now())
       order by completed_at limit $2 for update skip locked)
     returning id, site_id, code, source, status, email, masked_email`,
    [claimMinutes, limit],
  )
}

/** Removes the keyed email hashes whose repeat window has passed. */
export async function forgetEmailKeys(sql: Sql, windowHours: number): Promise<void> {
  await sql(`update deletion_requests set email_key = null where email_key is not null and received_at < now() - make_interval(hours => $1::int)`, [windowHours])
}

/** Clears whatever personal data is left in requests past their hard purge; returns how many. */
export async function hardPurgeRequests(sql: Sql, at: string): Promise<number> {
  const rows = await sql(
    `update deletion_requests set email = null, email_key = null, token_hash = null, locked_until = null, purged_at = now(),
       merchant_log = merchant_log || jsonb_build_array(jsonb_build_object('at', $1::text, 'event', 'hard_purged',
         'detail', case when status = 'completed' then 'the request''s own copy of the email and its link were removed'
                        else 'never confirmed: the request''s copy of the email and its link were removed; nothing was erased' end))
     where purged_at is null and hard_purge_at <= now()
     returning id`,
    [at],
  )
  return rows.length
}

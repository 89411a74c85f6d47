import type { Person } from '../erase/person.ts'
import type { Sql } from './one-off.ts'

/** SQL: the column with its query string and fragment removed (they carry click ids and form values). */
const stripQuery = (column: string) => `regexp_replace(${column}, '[?#].*$', '')`

/** SQL: every occurrence of the person's email or hashes in the column replaced by [erased]; $2 is the pattern. */
const redact = (column: string) => `regexp_replace(${column}, $2, '[erased]', 'gi')`

/** The person's visits on the site: identified by this email, or whose landing page or referrer holds it. */
const THEIR_SESSIONS = `select session_id from visits where site_id = $1
  and (email_hashes && $3::text[] or email_hash = any($3::text[]) or lower(email) = $4 or concat_ws(' ', landing_url, referrer) ~* $2)`

/** Held conversions of the person on the site (the release plugin erases them; counted before and after). */
export async function countHeldConversions(sql: Sql, siteId: string, email: string, emailHash: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `select count(*)::int as n from conversions where site_id = $1 and state = 'held' and (held_email = $2 or identity ->> 'email' = $3)`,
    [siteId, email, emailHash],
  )
  return row?.n ?? 0
}

/** Strips the buyer from the person's conversions (see erase/conversions.ts); returns how many. */
export async function anonymiseConversions(sql: Sql, person: Person): Promise<number> {
  const rows = await sql(
    `with theirs as (
       select c.id from conversions c
       where c.site_id = $1 and (
         c.identity ->> 'email' = any($3::text[]) or c.identity ->> 'emailGoogle' = $4 or c.held_email = $5
         or c.session_id in (select v.session_id from visits v where v.site_id = $1 and (v.email_hashes && $3::text[] or v.email_hash = any($3::text[]) or lower(v.email) = $5))
         or concat_ws(' ', c.user_id, c.anonymous_id, c.page_url) ~* $2
       )
     )
     update conversions c set identity = '{}'::jsonb, ip = null, user_agent = null, clear_traits = null, user_id = null, anonymous_id = null,
       click_ids = '{}'::jsonb, held_email = null, page_url = ${redact(stripQuery('c.page_url'))}
     from theirs where c.id = theirs.id
     returning c.id`,
    [person.siteId, person.pattern, person.exactHashes, person.googleHash, person.email],
  )
  return rows.length
}

/** The person's page events lose their URL queries; any event of the site holding the email has it erased. */
export async function anonymisePageEvents(sql: Sql, person: Person): Promise<number> {
  const rows = await sql(
    `update page_events set url = ${redact(stripQuery('url'))}, referrer = ${redact(stripQuery('referrer'))}, title = ${redact('title')},
       props = case when props::text ~* $2 then null else props end
     where site_id = $1 and (session_id in (${THEIR_SESSIONS}) or concat_ws(' ', url, referrer, title, props::text) ~* $2)
     returning id`,
    [person.siteId, person.pattern, person.exactHashes, person.email],
  )
  return rows.length
}

/** The person's visits lose everything that identifies them (see erase/visits.ts). */
export async function anonymiseVisits(sql: Sql, person: Person): Promise<number> {
  const rows = await sql(
    `update visits set email = null, email_hash = null, email_hashes = null, phone = null, first_name = null, last_name = null, identified_at = null,
       ip_address = null, user_agent = null, device_hash = null, visitor_id = null, click_ids = '{}'::jsonb,
       landing_url = ${redact(stripQuery('landing_url'))}, referrer = ${redact(stripQuery('referrer'))}, updated_at = now()
     where site_id = $1 and session_id in (${THEIR_SESSIONS})
     returning id`,
    [person.siteId, person.pattern, person.exactHashes, person.email],
  )
  return rows.length
}

export async function deleteIdentifiedUsers(sql: Sql, person: Person): Promise<number> {
  const rows = await sql(
    `delete from identified_users where site_id = $1 and (email_hash = any($2::text[]) or lower(email) = $3) returning id`,
    [person.siteId, person.exactHashes, person.email],
  )
  return rows.length
}

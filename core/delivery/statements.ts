/**
 * The intake's hot statements, run as prepared statements (core/db/prepared.ts): one read before the write,
 * the write, and the record of an attempt. Each name is bumped (`…_v2`) whenever its text changes.
 */
import type { PreparedStatement } from '../db/prepared.ts'

/**
 * $1 site, $2 messageId, $3 whether to search visits, $4 dc_session_id, $5 email hash. The trust tiers that already
 * hold the messageId (a repeat is answered before any hook runs; see pipeline.ts for what each tier may repeat) and
 * the person's earlier visits (by the session, or by any identity a visit was given), newest first, at most 50.
 */
export const LOOK_UP_INTAKE: PreparedStatement = {
  // email_hash too: a visit written by an instance of an earlier version (a rolling upgrade) has no email_hashes yet.
  name: 'dcgate_intake_lookup_v4',
  text: `select array(select trust from conversions where site_id = $1 and message_id = $2) as holders,
    case when $3::boolean then (select json_agg(v) from (
      select click_ids, consent, is_bot from visits where site_id = $1 and (session_id = $4 or email_hash = $5 or email_hashes @> array[$5::text])
      order by started_at desc, id desc limit 50) v) end as visits`,
}

/**
 * The conversion and its outbox rows in one atomic statement (insert-first dedupe: a messageId repeated within its
 * trust tier inserts nothing and returns no row). $1–$27 are the conversion's columns in the order listed; $28 the
 * delivery status, $29 its error, $30 whether this process claims the rows for an inline attempt (counted as
 * attempt 1 at once, so an attempt cut by a crash shows in the report), $31 the lease in seconds, $32 the providers,
 * $33 the held email (a held conversion only), $34 the trust tier, $35 seconds before the first attempt is due (a
 * public conversion's grace).
 */
export const INSERT_CONVERSION: PreparedStatement = {
  name: 'dcgate_insert_conversion_v3',
  text: `with c as (
      insert into conversions (id, site_id, message_id, source, event, standard_event, occurred_at, value, currency, order_id, channel,
        items, identity, click_ids, user_id, anonymous_id, session_id, page_url, ip, user_agent, consent, is_bot, confirmation, state,
        source_event_type, country, content_name, content_category, held_email, trust)
      values (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13::jsonb, $14, $15, $16, $17, $18, $19,
        $20, $21, $22, $23, $24, $25, $26, $27, $33, $34)
      on conflict (site_id, message_id, trust) do nothing returning id
    ), d as (
      insert into deliveries (id, conversion_id, site_id, provider, status, error, attempts, locked_until, next_attempt_at)
      select gen_random_uuid(), c.id, $1, p.provider, $28, $29, case when $30::boolean then 1 else 0 end,
        case when $30::boolean then now() + make_interval(secs => $31::int) end, now() + make_interval(secs => $35::int)
      from c, unnest($32::text[]) as p(provider)
      returning id, provider
    )
    select c.id as conversion_id, d.id, d.provider from c left join d on true`,
}

/**
 * $1 site, $2 messageId, $3 the reason. A trusted conversion was stored with the messageId a public one holds: the
 * public one's deliveries not attempted yet end skipped, so the platforms receive the trusted copy only. Clears the
 * public conversion's IP and user agent when none of its deliveries is left to attempt. Rare: run only when the
 * intake's lookup saw a public holder (the worker checks again before it sends a public conversion).
 */
export const SUPERSEDE_PUBLIC: PreparedStatement = {
  name: 'dcgate_supersede_public_v1',
  text: `with s as (
      update deliveries d set status = 'skipped', error = $3, locked_until = null, updated_at = now()
      from conversions p
      where p.site_id = $1 and p.message_id = $2 and p.trust = 'public' and d.conversion_id = p.id
        and d.status = 'pending' and d.attempts = 0
      returning d.id, d.conversion_id
    )
    update conversions c set ip = null, user_agent = null
    where c.id in (select conversion_id from s) and (c.ip is not null or c.user_agent is not null)
      and not exists (select 1 from deliveries o where o.conversion_id = c.id and o.status not in ('sent', 'failed', 'skipped')
        and o.id not in (select id from s))`,
}

/**
 * Every row of an attempt: $1 the new states as JSON, $2 their ids, $3 their conversions' ids. Also clears IP
 * and user agent of conversions none of whose deliveries may be attempted again.
 * - It commits without waiting for the WAL flush (`synchronous_commit` off for this transaction only). Losing it
 *   in a database crash leaves the rows claimed; when the lease runs out they are attempted again, and every
 *   platform drops the repeat by its event id. The conversion's own insert stays a synchronous commit: that is
 *   what "accepted, never lost" rests on. Measured: about a quarter more conversions/s on PostgreSQL.
 * - The id arrays (`= any(...)`) give the planner the real row count, where json_to_recordset's guess of 100 made
 *   it hash-join a sequential scan of deliveries (cost growing with the table).
 * - "Not ended" is written `not in (ended states)` so the planner does not walk the (status, next_attempt_at)
 *   index and its dead entries.
 */
export const RECORD_ATTEMPT: PreparedStatement = {
  name: 'dcgate_record_attempt_v1',
  // Measured: its generic plan, made on a fresh database, kept a sequential scan of deliveries (761 blocks a call).
  reusePlan: false,
  text: `with async_commit as materialized (select set_config('synchronous_commit', 'off', true)),
    v as (
      select x.* from async_commit, json_to_recordset($1::json) as x(id uuid, conversion_id uuid, status text, attempts int,
        http_status int, error text, duration_ms int, next_attempt_at timestamptz, sent_at timestamptz)
    ), u as (
      update deliveries d set status = v.status, attempts = v.attempts, http_status = v.http_status, error = v.error,
        last_duration_ms = v.duration_ms, locked_until = null, next_attempt_at = coalesce(v.next_attempt_at, now()),
        sent_at = v.sent_at, updated_at = now()
      from v where d.id = any($2::uuid[]) and d.id = v.id returning d.id
    )
    update conversions c set ip = null, user_agent = null
    where c.id = any($3::uuid[]) and (c.ip is not null or c.user_agent is not null)
      and not exists (select 1 from v where v.conversion_id = c.id and v.status = 'retrying')
      and not exists (select 1 from deliveries o where o.conversion_id = c.id and o.status not in ('sent', 'failed', 'skipped')
        and o.id not in (select id from v))`,
}

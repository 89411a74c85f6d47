/** Held conversions: release, list, drop, expire, erase. */
import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'
import { REFUSAL_WORDS } from '../../../core/consent/purposes.ts'
import { usPrivacyDropReason } from '../../../core/delivery/decide.ts'
import { oneOff } from './one-off.ts'

/**
 * $1 site, $2 event key, $3 normalised email, $4 expiry in days, $5 the site's platforms, $6 the email's SHA-256
 * (an integrator that sent the email already hashed). Claims every matching held row oldest first, marks it released as
 * `crm_qualified`, and writes its outbox rows; the delivery worker sends them like any other delivery. The gates
 * the conversion passed at capture apply again here, as core/delivery/decide.ts applies them: a bot; consent per
 * purpose (the conversion's own or its visit's, as stored with the rule that chose it) that denies advertising, else a
 * visit's one-bit refusal; or a US opt-out on a site whose `consent.usPrivacy` was `drop`. Each is recorded as skipped
 * with its reason ($7 and $8: an opt-out by Global Privacy Control and by the conversion's consent; $9 to $12: the
 * words of a consent refusal, core/consent/purposes.ts REFUSAL_WORDS).
 * Two identical releases at once (a CRM retrying, two pollers) are one after the other: the first takes a transaction
 * lock on (site, event, email), the second waits for it and then finds the rows released (its row locks re-read them).
 * Row locks alone let each take some of the rows, and both answer 200.
 */
const RELEASE_HELD: PreparedStatement = {
  name: 'dcgate_release_held_v7',
  text: `with one_at_a_time as materialized (
      select pg_advisory_xact_lock(hashtextextended($1 || chr(31) || $2 || chr(31) || $3, 0))
    ), claimed as (
      select id from conversions cross join one_at_a_time
      where site_id = $1 and event = $2 and state = 'held' and created_at > now() - make_interval(days => $4::int)
        and (held_email = $3 or (held_email is null and identity ->> 'email' = $6))
      order by created_at, id for update of conversions skip locked
    ), released as (
      update conversions c set state = 'released', resolved_at = now(), confirmation = 'crm_qualified', held_email = null,
        -- With no platform to send to, IP and browser are no longer needed; otherwise the last delivery clears them.
        ip = case when cardinality($5::text[]) = 0 then null else c.ip end,
        user_agent = case when cardinality($5::text[]) = 0 then null else c.user_agent end
      from claimed where c.id = claimed.id
      returning c.id, c.created_at, c.is_bot, c.us_privacy,
        case when c.consent_purposes ->> 'rule' in ('conversion', 'visit') then
            case when c.consent_purposes -> 'purposes' ->> 'advertising' = 'denied' then format(
              case when c.consent_purposes -> 'purposes' ->> 'measurement' = 'granted' then $9 else $10 end,
              c.consent_purposes -> 'purposes' ->> 'source', case when c.consent_purposes ->> 'rule' = 'conversion' then $11 else $12 end) end
          when c.consent = 'denied' then 'the visitor denied consent' end as consent_refusal
    ), d as (
      insert into deliveries (id, conversion_id, site_id, provider, status, error)
      select gen_random_uuid(), r.id, $1, p.provider,
        case when r.is_bot or r.consent_refusal is not null or r.us_privacy ->> 'mode' = 'drop' then 'skipped' else 'pending' end,
        case when r.is_bot then 'the matched visit was ruled a bot' when r.consent_refusal is not null then r.consent_refusal
          when r.us_privacy ->> 'mode' = 'drop' then case when r.us_privacy ->> 'signal' = 'gpc' then $7 else $8 end end
      from released r, unnest($5::text[]) as p(provider)
      returning conversion_id
    )
    select r.id, (select count(*) from d where d.conversion_id = r.id)::int as deliveries from released r order by r.created_at, r.id`,
}

/** The ids of the conversions released, oldest first. */
export async function releaseHeldRows(
  prepared: RunPrepared, held: { siteId: string, event: string, email: string, emailHash: string, expireAfterDays: number, platforms: readonly string[] },
): Promise<string[]> {
  const rows = await prepared<{ id: string }>(RELEASE_HELD, [
    held.siteId, held.event, held.email, held.expireAfterDays, held.platforms, held.emailHash,
    usPrivacyDropReason({ mode: 'drop', signal: 'gpc' }), usPrivacyDropReason({ mode: 'drop', signal: 'opt_out' }),
    REFUSAL_WORDS.measurementOnly, REFUSAL_WORDS.denied, REFUSAL_WORDS.conversion, REFUSAL_WORDS.visit,
  ])
  return rows.map((r) => r.id)
}

/**
 * $1 site, $2 conversion, $3 expiry in days. One lead still held and releasable: its event, and the email a release
 * matches it by (the normalised email, or for an email that arrived hashed its SHA-256).
 */
const FIND_HELD = oneOff(`select event, held_email as email, identity ->> 'email' as email_hash from conversions
  where site_id = $1 and id = $2 and state = 'held' and created_at > now() - make_interval(days => $3::int)`)

export async function findHeld(prepared: RunPrepared, siteId: string, conversionId: string, expireAfterDays: number): Promise<{ event: string, email: string | null, email_hash: string | null } | undefined> {
  return (await prepared<{ event: string, email: string | null, email_hash: string | null }>(FIND_HELD, [siteId, conversionId, expireAfterDays]))[0]
}

/** $1 expiry in days, $2 site, $3 state. A site's held conversions in one state, newest first (at most 500). */
const LIST_HELD = oneOff(`select id, message_id, event, standard_event, held_email as email, value, currency, order_id, session_id, state as status,
    created_at, resolved_at, created_at + make_interval(days => $1::int) as expires_at
  from conversions where site_id = $2 and state = $3 order by created_at desc, id desc limit 500`)

export function listHeld(prepared: RunPrepared, siteId: string, state: string, expireAfterDays: number): Promise<Record<string, unknown>[]> {
  return prepared<Record<string, unknown>>(LIST_HELD, [expireAfterDays, siteId, state])
}

/** $1 site, $2 conversion. A lead that is not a fit: never sent. */
const DROP_HELD = oneOff(`update conversions set state = 'dropped', resolved_at = now(), held_email = null, ip = null, user_agent = null, clear_traits = null
  where site_id = $1 and id = $2 and state = 'held' returning id`)

/** Whether the conversion was held (and is now dropped). */
export async function dropHeld(prepared: RunPrepared, siteId: string, conversionId: string): Promise<boolean> {
  return (await prepared(DROP_HELD, [siteId, conversionId])).length > 0
}

/** $1 expiry in days. Held conversions past it can no longer be released. Idempotent. */
const EXPIRE_HELD = oneOff(`update conversions set state = 'expired', resolved_at = now(), held_email = null, ip = null, user_agent = null, clear_traits = null
  where state = 'held' and created_at <= now() - make_interval(days => $1::int)`)

export async function expireHeld(prepared: RunPrepared, expireAfterDays: number): Promise<void> {
  await prepared(EXPIRE_HELD, [expireAfterDays])
}

/** An erasure scans the site's held rows: it gets the time the other erasure statements get (plugins/dsar). */
const ERASE_STATEMENT_MS = 300_000

/** $1 site, $2 normalised email, $3 its SHA-256. A deletion request removes the person's held rows. */
const ERASE_HELD = oneOff(`delete from conversions where site_id = $1 and state = 'held' and (held_email = $2 or identity ->> 'email' = $3)`, ERASE_STATEMENT_MS)

export async function eraseHeld(prepared: RunPrepared, siteId: string, email: string, emailHash: string): Promise<void> {
  await prepared(ERASE_HELD, [siteId, email, emailHash])
}

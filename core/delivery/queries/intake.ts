/**
 * The intake's statements, run as prepared statements (core/db/prepared.ts): one read before the write, the write,
 * and the rare supersede of a public copy. Each name is bumped (`…_v2`) whenever its text changes.
 */
import type { ConsentPurposes } from '../../consent/purposes.ts'
import { columnNames, recordsetOf, recordValueOf, type Column } from '../../db/columns.ts'
import { dataErrorCode } from '../../db/data-error.ts'
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import { TIME_ORDERED_UUID } from '../../db/time-ordered-uuid.ts'
import { CONVERSION_COLUMNS, DELIVERY_COLUMNS, type ConversionRow, type DeliveryRow } from '../rows.ts'

/**
 * The reads intake makes before its write, for several conversions in one round trip: $1 a JSON array with one
 * object per conversion (site, messageId, whether to search visits, dc_session_id, email hash; row `n` answers entry n).
 * For each: the trust tiers that already hold the messageId (a repeat is answered before any hook runs; see
 * pipeline.ts for what each tier may repeat), the person's earlier visits (by the session, or by any identity a visit
 * was given), newest first, at most 50, with whether each carried Global Privacy Control, and the newest one's
 * landing URL and user agent (a server conversion's web context when it brings none) and country (where a US opt-out
 * applies).
 */
const LOOK_UP_INTAKE: PreparedStatement = {
  name: 'dcgate_intake_lookup_v9',
  // The keys come as one JSON array, whose row count the planner guesses the same with or without its value: so the
  // plan it makes once per connection costs what one made per call would, and is kept (arrays of known length made
  // it plan every call, 0.1 ms a conversion). Made again as the tables grow (plan-generations.ts).
  planFollows: ['conversions', 'visits'],
  text: `with q as (
      select * from rows from (json_to_recordset($1::json) as (site_id text, message_id text, search boolean, session_id text, email_hash text))
        with ordinality as q(site_id, message_id, search, session_id, email_hash, n)
    )
    select q.n, array(select trust from conversions c where c.site_id = q.site_id and c.message_id = q.message_id) as holders,
      l.visits, l.newest
    from q cross join lateral (
      with k as (
        select id, started_at from visits where q.search and site_id = q.site_id and session_id = q.session_id
        union select id, started_at from visits where q.search and site_id = q.site_id and email_hash = q.email_hash
        union select id, started_at from visits where q.search and site_id = q.site_id and email_hashes @> array[q.email_hash]
        order by started_at desc, id desc limit 50
      ), v as (
        select w.click_ids, w.consent, w.consent_purposes, w.is_bot, w.gpc, w.landing_url, w.user_agent, w.country
        from k join visits w on w.id = k.id order by k.started_at desc, k.id desc)
      select (select json_agg(json_build_object('click_ids', click_ids, 'consent', consent, 'consent_purposes', consent_purposes, 'is_bot', is_bot, 'gpc', gpc)) from v) as visits,
        (select json_build_object('landing_url', landing_url, 'user_agent', user_agent, 'country', country) from v limit 1) as newest
    ) l`,
}

/** A visit as the intake's lookup returns it. */
export interface VisitRow { click_ids: Record<string, string>, consent: string, consent_purposes?: ConsentPurposes | null, is_bot: boolean, gpc: boolean }

/** The newest matched visit's web context and country. */
export interface NewestVisit { landing_url: string | null, user_agent: string | null, country?: string | null }

/** What the intake's lookup finds for one conversion. `holders`: `trusted` and/or `public`. */
export interface IntakeLookup { holders: string[], visits: VisitRow[], newest: NewestVisit | null }

/** One conversion's lookup keys. */
export interface LookupKey { siteId: string, messageId: string, sessionId?: string, emailHash?: string }

/** Both reads intake makes before its write, for several conversions in one round trip, in their order. */
export async function lookUpIntake(prepared: RunPrepared, keys: readonly LookupKey[]): Promise<IntakeLookup[]> {
  const rows = await prepared<{ n: string, holders: string[] | null, visits: VisitRow[] | null, newest: NewestVisit | null }>(LOOK_UP_INTAKE, [
    JSON.stringify(keys.map((k) => ({ site_id: k.siteId, message_id: k.messageId, search: Boolean(k.sessionId || k.emailHash), session_id: k.sessionId ?? null, email_hash: k.emailHash ?? null }))),
  ])
  const found: IntakeLookup[] = keys.map(() => ({ holders: [], visits: [], newest: null }))
  for (const row of rows) found[Number(row.n) - 1] = { holders: row.holders ?? [], visits: row.visits ?? [], newest: row.newest ?? null }
  return found
}

/** The columns that claim a row for the inline attempt, and their value in a row left unclaimed for the worker. */
const CLAIM_COLUMNS: Partial<Record<keyof DeliveryRow, string>> = { attempts: '0', locked_until: 'null' }

/**
 * Conversions and their outbox in one atomic statement, several conversions at once (insert-first dedupe: a messageId
 * repeated within its trust tier inserts nothing and returns no row). $1 is a JSON array with one object per
 * conversion: `n` (its position), the conversion's columns, its outbox rows' shared columns (rows.ts), `providers`
 * (one delivery each) and `inline`, whether each is claimed for the inline attempt. A claimed delivery is not written
 * as a row: the conversion holds its id and platform (`inline_deliveries`) until the lease's end (`inline_until`),
 * and the attempt's record inserts the row once, in its final state (queries/outbox.ts; a sweep recovers a process
 * that died meanwhile, queries/inline.ts). A skipped delivery, and one the intake leaves to the worker (unclaimed: no
 * attempt counted, no lease), is a row at once. Each delivery's id is made here either way, in time order
 * (TIME_ORDERED_UUID), so the indexes grow at the right edge; the caller never puts one messageId and trust twice in
 * a statement.
 */
const INSERT_CONVERSIONS: PreparedStatement = {
  name: 'dcgate_insert_conversions_v4',
  // Each conversion's held deliveries are gathered once, grouped (`h`): gathered per conversion with a scan of every
  // delivery in the statement, 1,600 conversions took 2.7 s (docs/architecture.md, "Statements that grew faster than their batch").
  text: `with x as (
      select * from ${recordsetOf([...CONVERSION_COLUMNS, ...DELIVERY_COLUMNS] as Column<ConversionRow & DeliveryRow>[], '$1', 'n int, providers text[], inline boolean[]')}
    ), p as materialized (
      select x.n, p.provider, p.inline, p.ord, ${TIME_ORDERED_UUID} as id, (p.inline and x.status = 'pending' and x.locked_until is not null) as held
      from x cross join unnest(x.providers, x.inline) with ordinality as p(provider, inline, ord)
    ), h as (
      select p.n, jsonb_agg(jsonb_build_object('id', p.id, 'provider', p.provider) order by p.ord) as deliveries from p where p.held group by p.n
    ), c as (
      insert into conversions (id, ${columnNames(CONVERSION_COLUMNS)}, inline_until, inline_deliveries)
      select ${TIME_ORDERED_UUID}, ${CONVERSION_COLUMNS.map(recordValueOf).join(', ')},
        case when h.deliveries is not null then now() + make_interval(secs => x.locked_until) end, h.deliveries
      from x left join h on h.n = x.n order by x.n
      on conflict (site_id, message_id, trust) do nothing returning id, site_id, message_id, trust
    ), stored as (
      select x.*, c.id as conversion_id from c join x on x.site_id = c.site_id and x.message_id = c.message_id and x.trust = c.trust
    ), d as (
      insert into deliveries (id, conversion_id, site_id, provider, ${columnNames(DELIVERY_COLUMNS)})
      select p.id, x.conversion_id, x.site_id, p.provider, ${DELIVERY_COLUMNS.map((column) => CLAIM_COLUMNS[column[0]] ? `case when p.inline then ${recordValueOf(column)} else ${CLAIM_COLUMNS[column[0]]} end` : recordValueOf(column)).join(', ')}
      from stored as x join p on p.n = x.n where not p.held
    )
    select s.n, s.conversion_id, p.id, p.provider, p.held from stored s left join p on p.n = s.n order by s.n, p.ord`,
}

/**
 * The stored conversion's id and its deliveries; null when the messageId was already taken in its trust tier. `held`:
 * claimed for the inline attempt and held by the conversion until the attempt's record writes its row.
 */
export interface InsertedConversion { conversionId: string, deliveries: { id: string, provider: string, held: boolean }[] }

/** A new conversion for `insertConversions`: its row, its outbox rows' shared columns, and one row per provider. */
export interface NewConversion { conversion: ConversionRow, delivery: DeliveryRow, providers: readonly string[], inline: readonly boolean[] }

/** Stores the conversions (distinct messageId and trust each) with their outbox; one result each, in order. */
export async function insertConversions(prepared: RunPrepared, items: readonly NewConversion[]): Promise<(InsertedConversion | null)[]> {
  const records = items.map((item, i) => ({ ...item.conversion, ...item.delivery, n: i + 1, providers: item.providers, inline: item.inline }))
  const rows = await prepared<{ n: number, conversion_id: string, id: string | null, provider: string | null, held: boolean | null }>(INSERT_CONVERSIONS, [JSON.stringify(records)])
  const results: (InsertedConversion | null)[] = items.map(() => null)
  for (const row of rows) {
    const result = results[row.n - 1] ??= { conversionId: row.conversion_id, deliveries: [] }
    if (row.id !== null && row.provider !== null) result.deliveries.push({ id: row.id, provider: row.provider, held: row.held === true })
  }
  return results
}

/** One conversion's insert: stored, a duplicate (null), or refused by the database for its data (that request's error). */
export type InsertResult = InsertedConversion | null | { refused: unknown }

/**
 * Stores conversions that arrived together in one statement. A messageId given twice in one trust tier among them
 * is a duplicate of the first (which either stores it or finds it stored). Should the database refuse the statement
 * for its data, each conversion is stored alone, so one it refuses fails only its own request.
 */
export async function insertTogether(prepared: RunPrepared, items: readonly NewConversion[]): Promise<InsertResult[]> {
  const keys = items.map(({ conversion: c }) => `${c.site_id}\u0000${c.trust}\u0000${c.message_id}`)
  const firsts = items.filter((_, i) => keys.indexOf(keys[i]!) === i)
  let stored: InsertResult[]
  try {
    stored = await insertConversions(prepared, firsts)
  }
  catch (error) {
    if (firsts.length === 1 || !dataErrorCode(error)) throw error
    stored = await Promise.all(firsts.map((item) => insertConversions(prepared, [item]).then(([one]) => one!, (refused: unknown) => ({ refused }))))
  }
  return items.map((item, i) => (keys.indexOf(keys[i]!) === i ? stored[firsts.indexOf(item)]! : null))
}

/**
 * $1 site, $2 messageId, $3 the reason. A trusted conversion was stored with the messageId a public one holds: the
 * public one's deliveries not attempted yet end skipped, so the platforms receive the trusted copy only. Clears the
 * public conversion's IP and user agent when its every delivery ended sent or skipped (a failed one may be retried,
 * and an inline attempt may still hold some, `inline_until`). Rare: run only when the
 * intake's lookup saw a public holder (the worker checks again before it sends a public conversion).
 */
const SUPERSEDE_PUBLIC: PreparedStatement = {
  name: 'dcgate_supersede_public_v4',
  text: `with s as (
      update deliveries d set status = 'skipped', error = $3, locked_until = null, updated_at = now()
      from conversions p
      where p.site_id = $1 and p.message_id = $2 and p.trust = 'public' and d.conversion_id = p.id
        and d.status = 'pending' and d.attempts = 0
      returning d.id, d.conversion_id
    )
    update conversions c set ip = null, user_agent = null, clear_traits = null, clear_erased_at = now()
    where c.id in (select conversion_id from s) and (c.ip is not null or c.user_agent is not null or c.clear_traits is not null)
      and c.inline_until is null
      and not exists (select 1 from deliveries o where o.conversion_id = c.id and o.status not in ('sent', 'skipped')
        and o.id not in (select id from s))`,
}

export async function supersedePublic(prepared: RunPrepared, siteId: string, messageId: string, reason: string): Promise<void> {
  await prepared(SUPERSEDE_PUBLIC, [siteId, messageId, reason])
}

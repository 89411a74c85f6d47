/**
 * The intake's statements, run as prepared statements (core/db/prepared.ts): one read before the write, the write,
 * and the rare supersede of a public copy. Each name is bumped (`…_v2`) whenever its text changes.
 */
import { columnNames, placeholders, valuesWriter } from '../../db/columns.ts'
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import { CONVERSION_COLUMNS, DELIVERY_COLUMNS, type ConversionRow, type DeliveryRow } from '../rows.ts'

/**
 * The reads intake makes before its write, for several conversions in one round trip: $1 sites, $2 messageIds, $3
 * whether to search visits, $4 dc_session_ids, $5 email hashes (one entry per conversion, row `n` answering entry n).
 * For each: the trust tiers that already hold the messageId (a repeat is answered before any hook runs; see
 * pipeline.ts for what each tier may repeat), the person's earlier visits (by the session, or by any identity a visit
 * was given), newest first, at most 50, with whether each carried Global Privacy Control, and the newest one's
 * landing URL and user agent (a server conversion's web context when it brings none) and country (where a US opt-out
 * applies).
 */
const LOOK_UP_INTAKE: PreparedStatement = {
  name: 'dcgate_intake_lookup_v7',
  text: `with q as (
      select * from unnest($1::text[], $2::text[], $3::boolean[], $4::text[], $5::text[]) with ordinality
        as q(site_id, message_id, search, session_id, email_hash, n)
    )
    select q.n, array(select trust from conversions c where c.site_id = q.site_id and c.message_id = q.message_id) as holders,
      l.visits, l.newest
    from q cross join lateral (
      with v as (
        select click_ids, consent, is_bot, gpc, landing_url, user_agent, country from visits
        where q.search and site_id = q.site_id and (session_id = q.session_id or email_hash = q.email_hash or email_hashes @> array[q.email_hash])
        order by started_at desc, id desc limit 50)
      select (select json_agg(json_build_object('click_ids', click_ids, 'consent', consent, 'is_bot', is_bot, 'gpc', gpc)) from v) as visits,
        (select json_build_object('landing_url', landing_url, 'user_agent', user_agent, 'country', country) from v limit 1) as newest
    ) l`,
}

/** A visit as the intake's lookup returns it. */
export interface VisitRow { click_ids: Record<string, string>, consent: string, is_bot: boolean, gpc: boolean }

/** The newest matched visit's web context and country. */
export interface NewestVisit { landing_url: string | null, user_agent: string | null, country?: string | null }

/** What the intake's lookup finds for one conversion. `holders`: `trusted` and/or `public`. */
export interface IntakeLookup { holders: string[], visits: VisitRow[], newest: NewestVisit | null }

/** One conversion's lookup keys. */
export interface LookupKey { siteId: string, messageId: string, sessionId?: string, emailHash?: string }

/** Both reads intake makes before its write, for several conversions in one round trip, in their order. */
export async function lookUpIntake(prepared: RunPrepared, keys: readonly LookupKey[]): Promise<IntakeLookup[]> {
  const rows = await prepared<{ n: string, holders: string[] | null, visits: VisitRow[] | null, newest: NewestVisit | null }>(LOOK_UP_INTAKE, [
    keys.map((k) => k.siteId), keys.map((k) => k.messageId), keys.map((k) => Boolean(k.sessionId || k.emailHash)),
    keys.map((k) => k.sessionId ?? null), keys.map((k) => k.emailHash ?? null),
  ])
  const found: IntakeLookup[] = keys.map(() => ({ holders: [], visits: [], newest: null }))
  for (const row of rows) found[Number(row.n) - 1] = { holders: row.holders ?? [], visits: row.visits ?? [], newest: row.newest ?? null }
  return found
}

const CONVERSION_PARAMS = CONVERSION_COLUMNS.length
const DELIVERY_PARAMS = DELIVERY_COLUMNS.length
const PROVIDERS = `$${CONVERSION_PARAMS + DELIVERY_PARAMS + 1}`
/** The columns that claim a row for the inline attempt, and their value in a row left unclaimed for the worker. */
const CLAIM_COLUMNS: Partial<Record<keyof DeliveryRow, string>> = { attempts: '0', locked_until: 'null' }
const INLINE = `$${CONVERSION_PARAMS + DELIVERY_PARAMS + 2}`

/**
 * The conversion and its outbox rows in one atomic statement (insert-first dedupe: a messageId repeated within its
 * trust tier inserts nothing and returns no row). The parameters are the conversion's columns, then the outbox
 * rows' (rows.ts), then the providers (one outbox row each) and whether each is claimed for the inline attempt: a
 * platform whose request budget is used up gets its row unclaimed (no attempt counted, no lease), for the worker.
 */
const INSERT_CONVERSION: PreparedStatement = {
  name: 'dcgate_insert_conversion_v6',
  text: `with c as (
      insert into conversions (id, ${columnNames(CONVERSION_COLUMNS)})
      values (gen_random_uuid(), ${placeholders(CONVERSION_COLUMNS)})
      on conflict (site_id, message_id, trust) do nothing returning id, site_id
    ), d as (
      insert into deliveries (id, conversion_id, site_id, provider, ${columnNames(DELIVERY_COLUMNS)})
      select gen_random_uuid(), c.id, c.site_id, p.provider, ${DELIVERY_COLUMNS.map(([name]) => CLAIM_COLUMNS[name] ? `case when p.inline then r.${name} else ${CLAIM_COLUMNS[name]} end` : `r.${name}`).join(', ')}
      from c, (select ${placeholders(DELIVERY_COLUMNS, CONVERSION_PARAMS + 1)}) as r(${columnNames(DELIVERY_COLUMNS)}),
        unnest(${PROVIDERS}::text[], ${INLINE}::boolean[]) as p(provider, inline)
      returning id, provider
    )
    select c.id as conversion_id, d.id, d.provider from c left join d on true`,
}

const writeConversion = valuesWriter(CONVERSION_COLUMNS)
const writeDelivery = valuesWriter(DELIVERY_COLUMNS)

/** The stored conversion's id and its outbox rows; null when the messageId was already taken in its trust tier. */
export interface InsertedConversion { conversionId: string, deliveries: { id: string, provider: string }[] }

export async function insertConversion(
  prepared: RunPrepared, conversion: ConversionRow, delivery: DeliveryRow, providers: readonly string[], inline: readonly boolean[],
): Promise<InsertedConversion | null> {
  const values = writeDelivery(delivery, writeConversion(conversion, []))
  values.push(providers, inline)
  const rows = await prepared<{ conversion_id: string, id: string | null, provider: string | null }>(INSERT_CONVERSION, values)
  if (rows.length === 0) return null
  const deliveries = rows[0]!.id === null ? [] : rows as { id: string, provider: string }[]
  return { conversionId: rows[0]!.conversion_id, deliveries }
}

/**
 * $1 site, $2 messageId, $3 the reason. A trusted conversion was stored with the messageId a public one holds: the
 * public one's deliveries not attempted yet end skipped, so the platforms receive the trusted copy only. Clears the
 * public conversion's IP and user agent when none of its deliveries is left to attempt. Rare: run only when the
 * intake's lookup saw a public holder (the worker checks again before it sends a public conversion).
 */
const SUPERSEDE_PUBLIC: PreparedStatement = {
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

export async function supersedePublic(prepared: RunPrepared, siteId: string, messageId: string, reason: string): Promise<void> {
  await prepared(SUPERSEDE_PUBLIC, [siteId, messageId, reason])
}

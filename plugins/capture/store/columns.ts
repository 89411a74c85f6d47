/**
 * Each table capture writes is declared here once, as its columns in order: the row types (rows.ts), the SQL of the
 * flush (write-batch.ts) and the row writers and readers are all made from these lists, so they cannot drift apart.
 *
 * Rows travel (to PostgreSQL and into the journal) as JSON arrays of their values in column order, read by position.
 * `json_to_recordset` looked every field up by name and cost about 13 µs a visit row in PostgreSQL; by position it
 * is under 4 µs (measured with 2,000 rows), and the JSON has no keys to write. Times travel as epoch milliseconds:
 * cheaper to write than ISO text here, and cheaper to read there. The order is the journal's format: append only.
 */
export type WireType = 'text' | 'uuid' | 'int' | 'boolean' | 'epoch_ms' | 'jsonb'

/**
 * How an upsert meets a stored row: `newer` takes the new value unless it is null, `first` keeps the stored one
 * unless it is null, `latest` takes the new one as it is; `{ sql }` is the expression itself (`v.` the stored row,
 * `excluded.` the new one). A column without one is never updated.
 */
export type Update = 'newer' | 'first' | 'latest' | { sql: string }

export interface Column<Value = unknown> {
  readonly type: WireType
  readonly update?: Update
  /** The inserted value, as SQL over the source row `s`; unset: the row's own value. */
  readonly insert?: string
  /** Type only: what a row holds in this column. */
  readonly value?: Value
}

export type Columns = Readonly<Record<string, Column>>

/** A row of a column list: one property per column, typed by its Value. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: C[K] extends Column<infer V> ? V : never }

function column<Value>(type: WireType, sql: Pick<Column, 'update' | 'insert'> = {}): Column<Value> {
  return { type, ...sql }
}

export const EVENT_COLUMNS = {
  id: column<string>('uuid'),
  site_id: column<string>('text'),
  /** Null for a hit counted without identifiers (consent required and not given). */
  session_id: column<string | null>('text', { update: 'latest' }),
  kind: column<'pageview' | 'event'>('text'),
  name: column<string | null>('text'),
  url: column<string>('text', { update: 'latest' }),
  referrer: column<string | null>('text', { update: 'latest' }),
  title: column<string | null>('text'),
  props: column<Record<string, unknown> | null>('jsonb'),
  occurred_at: column<number>('epoch_ms'),
  received_at: column<number>('epoch_ms'),
}

/** The visit as one request saw it; merged into the stored row (counts add up, the first landing page stays). */
export const VISIT_COLUMNS = {
  site_id: column<string>('text'),
  session_id: column<string>('text'),
  visitor_id: column<string | null>('text', { update: 'newer' }),
  // The visit spans its stored hits, this row, and the events the same statement inserted (`c`).
  started_at: column<number>('epoch_ms', { insert: 'least(s.started_at, c.first_at)', update: { sql: 'least(v.started_at, excluded.started_at)' } }),
  ended_at: column<number>('epoch_ms', { insert: 'greatest(s.ended_at, c.last_at)', update: { sql: 'greatest(v.ended_at, excluded.ended_at)' } }),
  ip_address: column<string | null>('text', { update: 'newer' }),
  user_agent: column<string | null>('text', { update: 'newer' }),
  country: column<string | null>('text', { update: 'newer' }),
  city: column<string | null>('text', { update: 'newer' }),
  isp: column<string | null>('text', { update: 'newer' }),
  organization: column<string | null>('text', { update: 'newer' }),
  asn: column<number | null>('int', { update: 'newer' }),
  is_vpn: column<boolean>('boolean', { update: 'latest' }),
  is_proxy: column<boolean>('boolean', { update: 'latest' }),
  is_tor: column<boolean>('boolean', { update: 'latest' }),
  is_hosting: column<boolean>('boolean', { update: 'latest' }),
  platform: column<string | null>('text', { update: 'newer' }),
  browser: column<string | null>('text', { update: 'newer' }),
  os: column<string | null>('text', { update: 'newer' }),
  // The newest verdict wins: later hits carry more signals (interactions) than the first.
  is_bot: column<boolean>('boolean', { update: 'latest' }),
  bot_reasons: column<string[]>('jsonb', { update: 'latest' }),
  referrer: column<string | null>('text', { update: 'first' }),
  landing_url: column<string | null>('text', { update: 'first' }),
  click_ids: column<Record<string, string>>('jsonb', { update: { sql: 'v.click_ids || excluded.click_ids' } }),
  consent: column<string>('text', { update: { sql: `case when excluded.consent = 'unknown' then v.consent else excluded.consent end` } }),
  device_hash: column<string | null>('text', { update: 'newer' }),
}

/** The columns of visits the flush computes instead of carrying them in the row (`c`: the events it inserted). */
export const VISIT_COMPUTED_COLUMNS: Readonly<Record<string, Pick<Column, 'insert' | 'update'>>> = {
  id: { insert: 'gen_random_uuid()' },
  duration_ms: {
    insert: '(extract(epoch from greatest(s.ended_at, c.last_at) - least(s.started_at, c.first_at)) * 1000)::bigint',
    update: { sql: '(extract(epoch from greatest(v.ended_at, excluded.ended_at) - least(v.started_at, excluded.started_at)) * 1000)::bigint' },
  },
  page_count: { insert: 'coalesce(c.pages, 0)', update: { sql: 'v.page_count + excluded.page_count' } },
  event_count: { insert: 'coalesce(c.events, 0)', update: { sql: 'v.event_count + excluded.event_count' } },
  updated_at: { insert: 'now()', update: { sql: 'now()' } },
}

/** A person a site identified by email, one per site and email (written by /identify, not batched). */
export const IDENTIFIED_USER_COLUMNS = {
  site_id: column<string>('text'),
  email: column<string>('text'),
  email_hash: column<string>('text'),
  source: column<'client_sdk' | 'form'>('text'),
  session_id: column<string>('text', { update: 'latest' }),
  visitor_id: column<string>('text', { update: 'latest' }),
  device_hash: column<string | null>('text', { update: 'newer' }),
  ip_country: column<string | null>('text'),
  ip_is_vpn: column<boolean>('boolean'),
  // Set by the email-risk plugin through capture:identify; a score already kept stays unless a new one came.
  email_risk_score: column<number | null>('int', { update: 'newer' }),
  email_risk_label: column<string | null>('text', { update: 'newer' }),
  is_disposable: column<boolean | null>('boolean', { update: 'newer' }),
}

export const IDENTIFIED_USER_COMPUTED_COLUMNS: Readonly<Record<string, Pick<Column, 'insert' | 'update'>>> = {
  id: { insert: 'gen_random_uuid()' },
  identified_at: { insert: 'now()' },
  last_seen_at: { insert: 'now()', update: { sql: 'now()' } },
}

/** A visit's key. */
export const SESSION_COLUMNS = { site_id: column<string>('text'), session_id: column<string>('text') }

/** `select <columns> from jsonb_array_elements($n)`: each element is one row's values in column order. */
export function rowsOf(columns: Columns, param: string): string {
  const fields = Object.entries(columns).map(([name, { type }], i) => {
    if (type === 'jsonb') return `nullif(r->${i}, 'null'::jsonb) as ${name}` // a JSON null is SQL NULL, as ->> gives
    if (type === 'epoch_ms') return `'epoch'::timestamptz + (r->>${i})::bigint * interval '1 millisecond' as ${name}`
    return type === 'text' ? `r->>${i} as ${name}` : `(r->>${i})::${type} as ${name}`
  })
  return `select ${fields.join(', ')} from jsonb_array_elements(${param}::jsonb) as r`
}

export interface Upsert {
  table: string
  columns: Readonly<Record<string, Pick<Column, 'insert' | 'update'>>>
  /** The source of the rows, named `s`, and what it joins; unset: one row of bound values, $1… in column order. */
  from?: string
  /** The conflict target. */
  key: readonly string[]
  /** Only stored rows matching this are updated. */
  where?: string
}

/**
 * `insert into <table> as v (<columns>) select <values> from <source> on conflict (<key>) do update set <updates>`,
 * from the column list: a column without an update rule keeps its stored value.
 */
export function upsertOf({ table, columns, from, key, where }: Upsert): string {
  const entries = Object.entries(columns)
  let n = 0
  const values = entries.map(([name, { insert }]) => insert ?? (from ? `s.${name}` : `$${++n}`)).join(', ')
  const sets = entries.flatMap(([name, { update }]) => (update ? [`${name} = ${updateOf(name, update)}`] : []))
  return `insert into ${table} as v (${entries.map(([name]) => name).join(', ')})
  ${from ? `select ${values}\n  from ${from}` : `values (${values})`}
  on conflict (${key.join(', ')}) do update set
    ${sets.join(',\n    ')}${where ? `\n  where ${where}` : ''}`
}

function updateOf(name: string, update: Update): string {
  if (update === 'newer') return `coalesce(excluded.${name}, v.${name})`
  if (update === 'first') return `coalesce(v.${name}, excluded.${name})`
  return update === 'latest' ? `excluded.${name}` : update.sql
}

/**
 * A function writing one row as the JSON array of its values. It is generated from the column list so that each
 * value is read by a fixed property name: reading them through the list (`row[name]`) was a megamorphic lookup per
 * value, and with the array it built cost twice as much per request in the capture benchmark.
 */
export function tupleWriter<C extends Columns>(columns: C): (row: RowOf<C>) => string {
  // The names are the column lists' own identifiers above, never input.
  return new Function('row', `return JSON.stringify([${Object.keys(columns).map((name) => `row.${name}`).join(', ')}])`) as (row: RowOf<C>) => string
}

/** A function reading a row back from the value array `tupleWriter` wrote (generated for the same reason). */
export function tupleReader<C extends Columns>(columns: C): (values: readonly unknown[]) => RowOf<C> {
  return new Function('values', `return { ${Object.keys(columns).map((name, i) => `${name}: values[${i}] ?? null`).join(', ')} }`) as (values: readonly unknown[]) => RowOf<C>
}

/** A row's values in column order (a refused row, as the dead letter keeps it). */
export function valuesOf<C extends Columns>(columns: C, row: RowOf<C>): unknown[] {
  return Object.keys(columns).map((name) => row[name])
}

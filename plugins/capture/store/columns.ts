import type { PageEventRow, SessionKey, VisitRow } from './rows.ts'

/**
 * Rows travel (to PostgreSQL and into the journal) as JSON arrays of their values in column order, read by position.
 * `json_to_recordset` looked every field up by name and cost about 13 µs a visit row in PostgreSQL; by position it
 * is under 4 µs (measured with 2,000 rows), and the JSON has no keys to write. These lists make both the SQL and the
 * arrays, so the two cannot drift apart. Times travel as epoch milliseconds: cheaper to write than ISO text here,
 * and cheaper to read there.
 */
export type Column<Row> = readonly [name: keyof Row & string, type: 'text' | 'uuid' | 'int' | 'boolean' | 'epoch_ms' | 'jsonb']

export const EVENT_COLUMNS = [
  ['id', 'uuid'], ['site_id', 'text'], ['session_id', 'text'], ['kind', 'text'], ['name', 'text'], ['url', 'text'],
  ['referrer', 'text'], ['title', 'text'], ['props', 'jsonb'], ['occurred_at', 'epoch_ms'], ['received_at', 'epoch_ms'],
] as const satisfies readonly Column<PageEventRow>[]

export const VISIT_COLUMNS = [
  ['site_id', 'text'], ['session_id', 'text'], ['visitor_id', 'text'], ['started_at', 'epoch_ms'], ['ended_at', 'epoch_ms'],
  ['ip_address', 'text'], ['user_agent', 'text'], ['country', 'text'], ['city', 'text'], ['isp', 'text'], ['organization', 'text'],
  ['asn', 'int'], ['is_vpn', 'boolean'], ['is_proxy', 'boolean'], ['is_tor', 'boolean'], ['is_hosting', 'boolean'],
  ['platform', 'text'], ['browser', 'text'], ['os', 'text'], ['is_bot', 'boolean'], ['bot_reasons', 'jsonb'], ['referrer', 'text'],
  ['landing_url', 'text'], ['click_ids', 'jsonb'], ['consent', 'text'], ['device_hash', 'text'],
] as const satisfies readonly Column<VisitRow>[]

export const SESSION_COLUMNS = [['site_id', 'text'], ['session_id', 'text']] as const satisfies readonly Column<SessionKey>[]

/** `select <columns> from jsonb_array_elements($n)`: each element is one row's values in column order. */
export function rowsOf<Row>(columns: readonly Column<Row>[], param: string): string {
  const fields = columns.map(([name, type], i) => {
    if (type === 'jsonb') return `nullif(r->${i}, 'null'::jsonb) as ${name}` // a JSON null is SQL NULL, as ->> gives
    if (type === 'epoch_ms') return `'epoch'::timestamptz + (r->>${i})::bigint * interval '1 millisecond' as ${name}`
    return type === 'text' ? `r->>${i} as ${name}` : `(r->>${i})::${type} as ${name}`
  })
  return `select ${fields.join(', ')} from jsonb_array_elements(${param}::jsonb) as r`
}

/**
 * A function writing one row as the JSON array of its values. It is generated from the column list so that each
 * value is read by a fixed property name: reading them through the list (`row[name]`) was a megamorphic lookup per
 * value, and with the array it built cost twice as much per request in the capture benchmark.
 */
export function tupleWriter<Row>(columns: readonly Column<Row>[]): (row: Row) => string {
  // The names are the column lists' own identifiers above, never input.
  return new Function('row', `return JSON.stringify([${columns.map(([name]) => `row.${name}`).join(', ')}])`) as (row: Row) => string
}

/** A function reading a row back from the value array `tupleWriter` wrote (generated for the same reason). */
export function tupleReader<Row>(columns: readonly Column<Row>[]): (values: readonly unknown[]) => Row {
  return new Function('values', `return { ${columns.map(([name], i) => `${name}: values[${i}] ?? null`).join(', ')} }`) as (values: readonly unknown[]) => Row
}

/** The row back from its array (journal replay); a time an older version wrote as ISO text becomes milliseconds. */
export function fromTuple<Row>(columns: readonly Column<Row>[], values: readonly unknown[]): Row {
  return Object.fromEntries(columns.map(([name, type], i) => {
    const value = values[i] ?? null
    return [name, type === 'epoch_ms' && typeof value === 'string' ? Date.parse(value) : value]
  })) as Row
}

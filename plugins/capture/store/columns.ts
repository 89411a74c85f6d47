import type { PageEventRow, SessionKey, VisitRow } from './rows.ts'

/**
 * Rows travel (to PostgreSQL and into the journal) as JSON arrays of their values in column order, read by position.
 * `json_to_recordset` looked every field up by name and cost about 13 µs a visit row in PostgreSQL; by position it
 * is under 4 µs (measured with 2,000 rows), and the JSON has no keys to write. These lists make both the SQL and the
 * arrays, so the two cannot drift apart.
 */
export type Column<Row> = readonly [name: keyof Row & string, type: 'text' | 'uuid' | 'int' | 'boolean' | 'timestamptz' | 'jsonb']

export const EVENT_COLUMNS = [
  ['id', 'uuid'], ['site_id', 'text'], ['session_id', 'text'], ['kind', 'text'], ['name', 'text'], ['url', 'text'],
  ['referrer', 'text'], ['title', 'text'], ['props', 'jsonb'], ['occurred_at', 'timestamptz'], ['received_at', 'timestamptz'],
] as const satisfies readonly Column<PageEventRow>[]

export const VISIT_COLUMNS = [
  ['site_id', 'text'], ['session_id', 'text'], ['visitor_id', 'text'], ['started_at', 'timestamptz'], ['ended_at', 'timestamptz'],
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
    return type === 'text' ? `r->>${i} as ${name}` : `(r->>${i})::${type} as ${name}`
  })
  return `select ${fields.join(', ')} from jsonb_array_elements(${param}::jsonb) as r`
}

/** One row as the JSON array of its values. */
export function toTuple<Row>(columns: readonly Column<Row>[], row: Row): string {
  return JSON.stringify(columns.map(([name]) => row[name]))
}

/** The row back from its array (journal replay). */
export function fromTuple<Row>(columns: readonly Column<Row>[], values: readonly unknown[]): Row {
  return Object.fromEntries(columns.map(([name], i) => [name, values[i] ?? null])) as Row
}

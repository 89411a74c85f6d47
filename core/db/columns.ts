/**
 * One column list per table makes both the SQL of an insert (column names, the typed record its rows are read from)
 * and the rows bound to it, so the two cannot drift apart and no reader counts placeholders.
 */

/**
 * How a row's value is typed in the record it is read from. `seconds_from_now` is a number of seconds (or null),
 * stored as `now()` plus that many, or null.
 */
export type ColumnKind = 'text' | 'int' | 'double' | 'boolean' | 'timestamptz' | 'jsonb' | 'seconds_from_now'

export type Column<Row> = readonly [name: keyof Row & string, kind: ColumnKind]

type Unlisted<Row, C extends readonly Column<Row>[]> = Exclude<keyof Row, C[number][0]>

/** A table's column list, checked to name every field of its row type (a field left out is a compile error). */
export function columnsOf<Row>() {
  return <const C extends readonly Column<Row>[]>(columns: C & ([Unlisted<Row, C>] extends [never] ? unknown : { unlisted: Unlisted<Row, C> })): C => columns
}

/** `a, b, c`: the column names for the insert's column list. */
export function columnNames<Row>(columns: readonly Column<Row>[]): string {
  return columns.map(([name]) => name).join(', ')
}

/**
 * `json_to_recordset($n::json) as x(<column> <type>, …)`: rows bound as one JSON array of objects (several rows in one
 * statement). Dates travel as ISO text; `seconds_from_now` as the number of seconds (see `recordValueOf`).
 */
export function recordsetOf<Row>(columns: readonly Column<Row>[], param: string, extra = ''): string {
  const types = columns.map(([name, kind]) => `${name} ${kind === 'double' ? 'double precision' : kind === 'seconds_from_now' ? 'int' : kind}`)
  return `json_to_recordset(${param}::json) as x(${[...types, ...(extra ? [extra] : [])].join(', ')})`
}

/** A recordset column's value expression: `x.<name>`, or now() plus its seconds for `seconds_from_now`. */
export function recordValueOf<Row>([name, kind]: Column<Row>): string {
  return kind === 'seconds_from_now' ? `now() + make_interval(secs => x.${name})` : `x.${name}`
}

/**
 * What a column list (tables.ts) makes: the row type, the SQL that reads rows from a jsonb parameter, the upsert
 * with its insert list and ON CONFLICT clause, the functions writing and reading a row's value array, and the
 * entity's properties.
 *
 * Rows travel (to PostgreSQL and into the journal) as JSON arrays of their values in column order, read by position.
 * `json_to_recordset` looked every field up by name and cost about 13 µs a visit row in PostgreSQL; by position it
 * is under 4 µs (measured with 2,000 rows), and the JSON has no keys to write. Times travel as epoch milliseconds:
 * cheaper to write than ISO text here, and cheaper to read there.
 */
export type WireType = 'text' | 'uuid' | 'int' | 'boolean' | 'epoch_ms' | 'jsonb'

/**
 * How an upsert meets a stored row: `newer` takes the new value unless it is null, `first` keeps the stored one
 * unless it is null, `latest` takes the new one as it is; `{ sql }` is the expression itself (`v.` the stored row,
 * `excluded.` the new one). A column without one is never updated.
 */
export type Update = 'newer' | 'first' | 'latest' | { sql: string }

/** A MikroORM property builder (`p.string().length(64)`): how the entity, and so the migrations, know the column. */
export type EntityProperty = object

export interface Column<Value = unknown> {
  readonly type: WireType
  /** The column's entity property (SQL type, length, nullability, default), for a table capture owns (entities.ts). */
  readonly entity?: EntityProperty
  readonly update?: Update
  /** The inserted value, as SQL over the source row `s`; unset: the row's own value. */
  readonly insert?: string
  /** Type only: what a row holds in this column. */
  readonly value?: Value
}

export type Columns = Readonly<Record<string, Column>>

/** A row of a column list: one property per column, typed by its Value. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: C[K] extends Column<infer V> ? V : never }

/** A column the statements compute (an id, a time, a count) instead of carrying it in the row. */
export type Computed = Pick<Column, 'entity' | 'insert' | 'update'>

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
  // The names are the column lists' own identifiers (tables.ts), never input.
  return new Function('row', `return JSON.stringify([${Object.keys(columns).map((name) => `row.${name}`).join(', ')}])`) as (row: RowOf<C>) => string
}

/** A function reading a row back from the value array `tupleWriter` wrote (generated for the same reason). */
export function tupleReader<C extends Columns>(columns: C): (values: readonly unknown[]) => RowOf<C> {
  return new Function('values', `return { ${Object.keys(columns).map((name, i) => `${name}: values[${i}] ?? null`).join(', ')} }`) as (values: readonly unknown[]) => RowOf<C>
}

/** A row's values in column order: the parameters of a one-row upsert, or a refused row as the dead letter keeps it. */
export function valuesOf<C extends Columns>(columns: C, row: RowOf<C>): unknown[] {
  return Object.keys(columns).map((name) => row[name])
}

/** Entity properties from column lists: the camelCase of each column's name, with its own property builder. */
export function entityProperties(...lists: readonly Readonly<Record<string, Pick<Column, 'entity'>>>[]): Record<string, EntityProperty> {
  const properties: Record<string, EntityProperty> = {}
  for (const [name, { entity }] of lists.flatMap((list) => Object.entries(list))) {
    if (!entity) throw new TypeError(`column ${name} has no entity property`)
    properties[name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())] = entity
  }
  return properties
}

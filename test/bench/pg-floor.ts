// The floor under PostgreSQL's cost per conversion, measured on the database dcgate has just used, in the same run:
// only the rows a conversion to eight platforms leaves behind (the conversion and its eight sent deliveries), copied
// from one dcgate stored, inserted with every index those tables have and a synchronous commit, several per statement.
// No lookup, no record, no update: what dcgate's figure cannot go below while it keeps a row per delivery.
import pg from 'pg'
import { TIME_ORDERED_UUID } from '../../core/db/time-ordered-uuid.ts'
import { cpuSince, postgresCpuMs } from './support.ts'

export interface Floor { conversions: number, perSecond: number, postgresCpuMs: number }

export const PER_STATEMENT = 5
export const CLIENTS = 4

/** Inserts copies of a stored conversion with eight deliveries for `seconds`; null when the database holds none. */
export async function measureRowFloor(url: string, database: string, seconds: number): Promise<Floor | null> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    return client
  }))
  try {
    const setup = clients[0]!
    const source = (await setup.query<{ id: string }>(`select conversion_id as id from deliveries where status = 'sent' group by 1 having count(*) = 8 limit 1`)).rows[0]
    if (!source) return null
    const text = await copyStatement(setup)
    const cpu = postgresCpuMs(database)
    const started = performance.now()
    const deadline = started + seconds * 1000
    let statements = 0
    await Promise.all(clients.map(async (client) => {
      while (performance.now() < deadline) {
        await client.query({ name: 'bench_row_floor', text, values: [source.id] })
        statements++
      }
    }))
    const elapsed = (performance.now() - started) / 1000
    const conversions = statements * PER_STATEMENT
    return { conversions, perSecond: conversions / elapsed, postgresCpuMs: cpuSince(cpu, postgresCpuMs(database)) / conversions }
  }
  finally {
    await Promise.all(clients.map((client) => client.end()))
  }
}

/** $1 a stored conversion's id: PER_STATEMENT copies of it (new id and messageId) and of its deliveries. */
async function copyStatement(client: pg.Client): Promise<string> {
  const columns = async (table: string) => (await client.query<{ name: string }>(
    `select quote_ident(column_name) as name from information_schema.columns where table_schema = current_schema() and table_name = $1 order by ordinal_position`, [table])).rows.map((row) => row.name)
  const conversion = (await columns('conversions')).filter((name) => !['id', 'message_id', 'order_id'].includes(name))
  const delivery = (await columns('deliveries')).filter((name) => !['id', 'conversion_id'].includes(name))
  return `with n as (
      select ${TIME_ORDERED_UUID} as id, g from generate_series(1, ${PER_STATEMENT}) g
    ), c as (
      insert into conversions (id, message_id, order_id, ${conversion.join(', ')})
      select n.id, n.id::text, n.id::text, ${conversion.map((name) => `s.${name}`).join(', ')} from conversions s, n where s.id = $1
    )
    insert into deliveries (id, conversion_id, ${delivery.join(', ')})
    select ${TIME_ORDERED_UUID}, n.id, ${delivery.map((name) => `d.${name}`).join(', ')} from deliveries d, n where d.conversion_id = $1`
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPlanGenerations, generationOf } from '../../core/db/plan-generations.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { onPostgres, sharedDatabase, type TestDatabase } from '../helpers/database.ts'

/** A size reader whose answers the test sets, and which counts its reads. */
function sizes(initial: Record<string, number>) {
  const pages = { ...initial }
  let reads = 0
  let failing = false
  const read = async (tables: readonly string[]) => {
    reads++
    if (failing) throw new Error('database gone')
    return tables.map((table) => pages[table] ?? 0)
  }
  return { read, pages, reads: () => reads, fail: (on: boolean) => { failing = on } }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('plan generations', () => {
  it('count the doublings of a table', () => {
    expect([0, 1, 2, 3, 4, 7, 8, 1000, 1024, 2047, 2048].map(generationOf)).toEqual([0, 1, 2, 2, 3, 3, 4, 10, 11, 11, 12])
  })

  it('leave a statement unnamed until the sizes are known, then name it by the generation of each table', async () => {
    const db = sizes({ deliveries: 100, conversions: 12 })
    let now = 0
    const generations = createPlanGenerations(db.read, () => now)
    expect(generations.nameFor('record', ['deliveries', 'conversions'])).toBeUndefined()
    await settle()
    expect(generations.nameFor('record', ['deliveries', 'conversions'])).toBe('record_g7_4')
    // Growth within a factor of two keeps the name (and the plan); a doubling changes it.
    db.pages.deliveries = 127
    now += 1000
    generations.nameFor('record', ['deliveries', 'conversions'])
    await settle()
    expect(generations.nameFor('record', ['deliveries', 'conversions'])).toBe('record_g7_4')
    db.pages.deliveries = 128
    now += 1000
    generations.nameFor('record', ['deliveries', 'conversions'])
    await settle()
    expect(generations.nameFor('record', ['deliveries', 'conversions'])).toBe('record_g8_4')
  })

  it('read the sizes at most once a second, and keep the last ones when a read fails', async () => {
    const db = sizes({ visits: 3 })
    let now = 0
    const generations = createPlanGenerations(db.read, () => now)
    generations.nameFor('lookup', ['visits'])
    await settle()
    for (let i = 0; i < 10; i++) generations.nameFor('lookup', ['visits'])
    now += 999
    generations.nameFor('lookup', ['visits'])
    expect(db.reads()).toBe(1)
    db.fail(true)
    db.pages.visits = 64
    now += 1
    generations.nameFor('lookup', ['visits'])
    await settle()
    expect(db.reads()).toBe(2)
    expect(generations.nameFor('lookup', ['visits'])).toBe('lookup_g2')
  })
})

// On PostgreSQL the statements are really named: the sizes come from the server, and a statement keeps answering
// while its table grows through several generations (each a new prepared statement on every connection).
describe.skipIf(!onPostgres)('plans that follow the table, on PostgreSQL', () => {
  let database: TestDatabase & { url: string }
  let app: TestApp
  beforeAll(async () => {
    database = await sharedDatabase()
    app = await bootTestApp({ plugins: [] }, { databaseUrl: database.url })
  })
  afterAll(async () => {
    await app?.close()
    await database?.drop()
  })

  const sql = <R extends object>(text: string, values: unknown[] = []) => app.dcgate.context.prepared<R>({ name: '', text, reusePlan: false }, values)

  it('reads the size of a plain table, of a partitioned one (its partitions) and of none', async () => {
    const { READ_PAGES_SQL } = await import('../../core/db/plan-generations.ts')
    await sql('create table plan_sizes_plain (id int primary key, pad text)')
    await sql(`insert into plan_sizes_plain select i, repeat('x', 500) from generate_series(1, 2000) i`)
    const rows = await sql<{ pages: number }>(READ_PAGES_SQL, [['plan_sizes_plain', 'page_events', 'no_such_table']])
    const [plain, partitioned, missing] = rows.map((row) => row.pages)
    expect(plain).toBeGreaterThan(100)
    expect(partitioned).toBeGreaterThanOrEqual(0)
    expect(missing).toBe(0)
  })

  it('answers the same before and after its table doubles many times', async () => {
    await sql('create table plan_follows (id int primary key, pad text)')
    const statement = { name: 'test_plan_follows_v1', planFollows: ['plan_follows'], text: 'select count(*)::int as n from plan_follows where id = any($1::int[])' }
    const count = async (ids: number[]) => (await app.dcgate.context.prepared<{ n: number }>(statement, [ids]))[0]!.n
    let size = 1
    await sql('insert into plan_follows values (1, null)')
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 12; i++) expect(await count([1, size, size + 1])).toBe(size === 1 ? 1 : 2)
      await sql(`insert into plan_follows select i, repeat('x', 200) from generate_series($1::int + 1, $1::int * 4) i`, [size])
      size *= 4
      await new Promise((resolve) => setTimeout(resolve, 1050))
    }
    expect(await sql<{ jit: string }>('show jit')).toEqual([{ jit: 'off' }])
  }, 30_000)
})

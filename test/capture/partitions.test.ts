import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inTransaction } from '../../core/db/transaction.ts'
import { createRetention } from '../../plugins/capture/retention.ts'
import { makePartitionsAhead } from '../../plugins/capture/retention-partitions.ts'
import { dayPartition, makeDayPartitions } from '../../plugins/capture/store/partitions.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { onPostgres, sharedDatabase } from '../helpers/database.ts'

// page_events by day: the partitions made ahead, hits the default partition took moved into their day, and retention
// dropping a whole day only when every site with hits in it is done keeping them.
const DAY = 86_400_000
const daysFromNow = (days: number) => new Date(Date.now() + days * DAY)
const cleanup: (() => Promise<unknown>)[] = []
let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['capture'],
    capture: { retentionDays: 30 },
    sites: [{ id: 'short', name: 'Short' }, { id: 'own', name: 'Own', capture: { retentionDays: 400 } }],
  })
}, 300_000) // a shared, loaded machine took over 2 minutes to boot the embedded database
afterAll(async () => {
  await app?.close()
  for (const fn of cleanup) await fn()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const partitions = async () => (await sql<{ name: string }[]>(`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = 'page_events'::regclass order by 1`)).map((r) => r.name)
const partitionOf = async (id: string) => (await sql<{ name: string }[]>('select tableoid::regclass::text as name from page_events where id = ?', [id]))[0]?.name
async function hit(site: string, at: Date, session = 'partition-test'): Promise<string> {
  const id = randomUUID()
  await sql(`insert into page_events (id, site_id, session_id, kind, url, occurred_at, received_at) values (?, ?, ?, 'pageview', 'https://shop.example/', ?, ?)`, [id, site, session, at, at])
  return id
}

describe('page_events partitions', () => {
  it('exist for today and the week ahead once the app started, beside a default partition', async () => {
    const names = await partitions()
    for (let day = 0; day <= 7; day++) expect(names).toContain(dayPartition(daysFromNow(day)).name)
    expect(names).toContain('page_events_default')
    expect(await partitionOf(await hit('short', new Date()))).toBe(dayPartition(new Date()).name)
  })

  it('a hit beyond the days made lands in the default partition, and moves into its day when that is made', async () => {
    const later = daysFromNow(40)
    const id = await hit('short', later)
    expect(await partitionOf(id)).toBe('page_events_default')
    const made = await makePartitionsAhead(app.dcgate.context, daysFromNow(35))
    expect(made).toContain(dayPartition(later).name)
    expect(await partitionOf(id)).toBe(dayPartition(later).name)
    expect((await sql<{ n: number }[]>('select count(*)::int as n from page_events where id = ?', [id]))[0]!.n).toBe(1)
    // Run again: nothing more to make.
    expect(await makePartitionsAhead(app.dcgate.context, daysFromNow(35))).toEqual([])
  })

  it('retention drops a day whose sites are all past their cutoff, and deletes row by row where a site keeps longer', async () => {
    const [dropped, kept] = [daysFromNow(-45), daysFromNow(-50)]
    await inTransaction(app.dcgate.database.orm, (trx) => makeDayPartitions(trx, [dropped, kept]))
    await hit('short', dropped, 'gone-1')
    await hit('short', dropped, 'gone-2')
    await hit('short', kept, 'gone-3')
    await hit('own', kept, 'stays') // this site keeps 400 days: the day stays, its 'short' hit goes alone
    await hit('short', daysFromNow(-5), 'recent')

    const rounds = await createRetention(app.dcgate.context, 30).run()

    expect(rounds.map((r) => [r.siteId, r.deleted.page_events])).toEqual([['short', 3], ['own', 0]])
    const names = await partitions()
    expect(names).not.toContain(dayPartition(dropped).name)
    expect(names).toContain(dayPartition(kept).name)
    const left = await sql<{ session_id: string }[]>(`select session_id from page_events where session_id in ('gone-1', 'gone-2', 'gone-3', 'stays', 'recent') order by 1`)
    expect(left.map((r) => r.session_id)).toEqual(['recent', 'stays'])
  })

  // Only PostgreSQL can host two instances (PGlite has one session, shared by every connection).
  it.skipIf(!onPostgres)('two instances making the same days at once make each once, and neither fails', async () => {
    const database = await sharedDatabase()
    cleanup.push(database.drop)
    const [a, b] = await Promise.all([bootTestApp({ plugins: ['capture'] }, { databaseUrl: database.url }), bootTestApp({ plugins: ['capture'] }, { databaseUrl: database.url })])
    cleanup.push(a.close, b.close)
    const at = daysFromNow(20)
    const [madeA, madeB] = await Promise.all([makePartitionsAhead(a.dcgate.context, at), makePartitionsAhead(b.dcgate.context, at)])
    const expected = Array.from({ length: 8 }, (_, i) => dayPartition(new Date(at.getTime() + i * DAY)).name)
    expect([...madeA, ...madeB].sort()).toEqual(expected)
    expect(await makePartitionsAhead(b.dcgate.context, at)).toEqual([])
  }, 180_000)
})

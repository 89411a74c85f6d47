// Retention of one day of hits on real PostgreSQL: the day partition dropped (page_events partitioned by day, 20 million
// hits over 30 days) beside the row-by-row delete capture used before partitions (5,000 rows a statement, on an
// unpartitioned table of the old shape with BENCH_BASELINE_HITS over the same 30 days), both in the same run.
// Run: npm run bench:partitions (BENCH_HITS=20000000, BENCH_BASELINE_HITS=2000000; needs PostgreSQL at
// BENCH_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres).
import { MikroORM } from '@mikro-orm/postgresql'
import { coreEntities, ormOptions } from '../../core/db/orm.ts'
import { createPreparedRunner } from '../../core/db/prepared.ts'
import { inTransaction } from '../../core/db/transaction.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { createRetention } from '../../plugins/capture/retention.ts'
import { dayPartition, makeDayPartitions } from '../../plugins/capture/store/partitions.ts'
import { freshPostgres, loadAverage } from './support.ts'

const HITS = Number(process.env.BENCH_HITS ?? 20_000_000)
const BASELINE_HITS = Number(process.env.BENCH_BASELINE_HITS ?? 2_000_000)
const DAYS = 30
const DAY = 86_400_000
const CHUNK = 1_000_000
const SITES = ['shop', 'blog']

const database = await freshPostgres()
if (!database) {
  console.log('partitions bench: no PostgreSQL reachable at BENCH_DATABASE_URL; skipped')
  process.exit(0)
}
const entities = [...coreEntities, ...Object.values(builtInPlugins).flatMap((p) => p.entities ?? [])]
const orm = await MikroORM.init(ormOptions(database.url, entities, false))
const sql = <T extends object>(text: string, values: unknown[] = []) => orm.em.getConnection().execute<T[]>(text, values)
const seconds = (since: number) => (performance.now() - since) / 1000

try {
  await orm.getMigrator().up()
  const now = new Date()
  const days = Array.from({ length: DAYS + 1 }, (_, i) => new Date(now.getTime() - i * DAY))
  await inTransaction(orm, (trx) => makeDayPartitions(trx, days))
  const oldest = dayPartition(days[DAYS]!)

  // Hits spread evenly over the last DAYS days, newest now; both sites in every day. The table's key and indexes are
  // built after the rows (sorted builds: minutes faster than 20 million index insertions), as they were named.
  const INDEXES = (table: string) => [
    `alter table ${table} add constraint ${table}_pkey primary key (${table === 'page_events' ? 'id, received_at' : 'id'})`,
    `create index ${table}_site_id_received_at_id_index on ${table} (site_id, received_at, id)`,
    `create index ${table}_site_id_session_id_index on ${table} (site_id, session_id)`,
  ]
  const fill = async (table: string, total: number) => {
    const started = performance.now()
    await sql(`alter table ${table} drop constraint if exists ${table}_pkey`)
    await sql(`drop index if exists ${table}_site_id_received_at_id_index, ${table}_site_id_session_id_index`)
    for (let from = 1; from <= total; from += CHUNK) {
      const to = Math.min(total, from + CHUNK - 1)
      await sql(`insert into ${table} (id, site_id, session_id, kind, url, title, occurred_at, received_at)
        select gen_random_uuid(), (array['${SITES.join("','")}'])[1 + i % ${SITES.length}], 'sess-' || (i / 5), 'pageview',
          'https://shop.example/p/' || (i % 500), 'Page', t, t
        from generate_series(${from}, ${to}) as i, lateral (select ?::timestamptz - (i * (${DAYS} * 86400.0 / ${total})) * interval '1 second' as t) x`, [now])
    }
    for (const statement of INDEXES(table)) await sql(statement)
    await sql(`analyze ${table}`)
    console.log(`${table}: ${total.toLocaleString('en')} hits written in ${seconds(started).toFixed(0)} s`)
  }

  // The baseline first: the table as it was before Migration20261128130000, and the delete retention ran on it.
  await sql(`create table page_events_unpartitioned (like page_events including defaults)`)
  await fill('page_events_unpartitioned', BASELINE_HITS)
  let baselineRows = 0
  const baselineStarted = performance.now()
  for (const site of SITES) {
    let gone: number
    do {
      const [row] = await sql<{ n: number }>(`with gone as (delete from page_events_unpartitioned where id in (select id from page_events_unpartitioned
          where site_id = ? and received_at < ? order by received_at limit 5000 for update skip locked) returning 1) select count(*)::int as n from gone`, [site, oldest.to])
      gone = row!.n
      baselineRows += gone
    } while (gone === 5000)
  }
  const baselineSeconds = seconds(baselineStarted)
  await sql('drop table page_events_unpartitioned')

  await fill('page_events', HITS)
  const [{ n: dayRows } = { n: 0 }] = await sql<{ n: number }>(`select count(*)::int as n from "${oldest.name}"`)
  const prepared = await createPreparedRunner(orm)
  // Every site keeps hits until the end of the oldest day: exactly that day is past the retention window.
  const retentionDays = (now.getTime() - oldest.to.getTime()) / DAY
  const ctx = {
    orm, prepared,
    sites: { list: () => SITES.map((id) => ({ id, config: { capture: {} } })) },
    logger: { info: (message: string) => console.log(`  ${message}`) },
  } as unknown as PluginContext
  const started = performance.now()
  const rounds = await createRetention(ctx, retentionDays).run(now)
  const partitionSeconds = seconds(started)
  const removed = rounds.reduce((sum, r) => sum + r.deleted.page_events, 0)

  const perSecond = baselineRows / baselineSeconds
  console.log(`\nRetention of one day of hits, PostgreSQL (load ${loadAverage()}):`)
  console.log(`  row by row, ${BASELINE_HITS.toLocaleString('en')}-hit table: ${baselineRows.toLocaleString('en')} rows in ${baselineSeconds.toFixed(2)} s (${Math.round(perSecond).toLocaleString('en')} rows/s; one day of the ${HITS.toLocaleString('en')}-hit table, ${dayRows.toLocaleString('en')} rows, would take about ${(dayRows / perSecond).toFixed(0)} s)`)
  console.log(`  partition dropped, ${HITS.toLocaleString('en')}-hit table: ${removed.toLocaleString('en')} rows in ${partitionSeconds.toFixed(2)} s (target < 1 s)`)
  if (removed !== dayRows) throw new Error(`retention removed ${removed} hits, the oldest day held ${dayRows}`)
}
finally {
  await orm.close(true)
  await database.drop()
}

import { MikroORM } from '@mikro-orm/postgresql'
import { afterAll, describe, expect, it } from 'vitest'
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../core/db/embedded.ts'
import { coreEntities, ormOptions } from '../../core/db/orm.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { freshDatabase, onPostgres } from '../helpers/database.ts'

// Migration20261128130000 turns page_events into a table partitioned by day: every row moves, none twice. On
// PostgreSQL (CI's second pass) with 5 million rows; on the embedded database with fewer (PGlite is much slower).
const ROWS = onPostgres ? 5_000_000 : 20_000
const DAYS = 60
const BEFORE = 'Migration20261128093000'

const entities = [...coreEntities, ...Object.values(builtInPlugins).flatMap((p) => p.entities ?? [])]
const cleanup: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn()
}, 120_000)

interface Tally { n: string, checksum: string, days: string, sites: string }
// Every column of every row goes into the checksum (the row as text, hashed and summed): a row lost, doubled or changed shows.
const TALLY = `select count(*)::text as n, sum(hashtextextended(e::text, 0))::text as checksum,
  count(distinct date_trunc('day', received_at))::text as days, count(distinct site_id)::text as sites from page_events e`

describe(`the page_events partitioning migration on ${onPostgres ? 'PostgreSQL' : 'the embedded database'}`, () => {
  it(`moves ${ROWS.toLocaleString('en')} rows into day partitions without losing, doubling or changing one`, async () => {
    const database = await freshDatabase()
    cleanup.push(database.drop)
    let embedded: EmbeddedDatabase | undefined
    if (!database.url) {
      embedded = await startEmbeddedDatabase(null)
      cleanup.push(embedded.close)
    }
    const options = ormOptions(database.url ?? embedded!.url, entities, !database.url)
    const orm = await MikroORM.init({ ...options, migrations: { ...options.migrations, silent: true } })
    cleanup.push(() => orm.close(true))
    const sql = <T extends object>(text: string) => orm.em.getConnection().execute<T[]>(text)
    await orm.getMigrator().up({ to: BEFORE })
    const begun = performance.now()

    // Seeded without the old table's indexes, built afterwards with their names (sorted builds: a few seconds, where
    // 5 million index insertions of random ids take minutes); the migration renames them.
    await sql('alter table page_events drop constraint page_events_pkey')
    await sql('drop index page_events_site_id_received_at_id_index, page_events_site_id_session_id_index')
    // Hits of the last DAYS days (newest up to now), of 50 sites, with and without a visit, properties on some.
    await sql(`insert into page_events (id, site_id, session_id, kind, name, url, referrer, title, props, occurred_at, received_at)
      select gen_random_uuid(), 'site-' || (i % 50), case when i % 7 = 0 then null else 'sess-' || (i / 5) end,
        case when i % 4 = 0 then 'event' else 'pageview' end, case when i % 4 = 0 then 'click' end,
        'https://shop.example/p/' || i, case when i % 3 = 0 then 'https://ref.example/' end, 'Page ' || i,
        case when i % 4 = 0 then jsonb_build_object('n', i) end,
        now() - (i * (${DAYS} * 86400.0 / ${ROWS})) * interval '1 second' - interval '2 seconds',
        now() - (i * (${DAYS} * 86400.0 / ${ROWS})) * interval '1 second'
      from generate_series(1, ${ROWS}) as i`)
    await sql('alter table page_events add constraint page_events_pkey primary key (id)')
    await sql('create index page_events_site_id_received_at_id_index on page_events (site_id, received_at, id)')
    await sql('create index page_events_site_id_session_id_index on page_events (site_id, session_id)')
    const [before] = await sql<Tally>(TALLY)
    expect(before!.n).toBe(String(ROWS))
    const seeded = (performance.now() - begun) / 1000

    const started = performance.now()
    await orm.getMigrator().up()
    const seconds = (performance.now() - started) / 1000
    console.log(`page_events partitioning migration: ${ROWS.toLocaleString('en')} rows in ${seconds.toFixed(1)} s (seeded and tallied in ${seeded.toFixed(1)} s)`)

    expect(await sql<Tally>(TALLY)).toEqual([before])
    const [shape] = await sql<{ strategy: string, partitions: number, in_default: number }>(`select
      (select partstrat from pg_partitioned_table where partrelid = 'page_events'::regclass) as strategy,
      (select count(*)::int from pg_inherits where inhparent = 'page_events'::regclass) as partitions,
      (select count(*)::int from page_events_default) as in_default`)
    // A day partition for each day with rows (DAYS + 1 with today's), the week ahead, and the default one, empty.
    expect(shape).toEqual({ strategy: 'r', partitions: DAYS + 1 + 7 + 1, in_default: 0 })
    expect(await sql('select 1 from pg_class where relname = \'page_events_unpartitioned\'')).toEqual([])
    // The entities describe the table as it now is.
    expect(await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false })).toBe('')
  }, 1_200_000) // About 10 minutes on the 2-core development machine under a load average of 28; far less on a quiet one.
})

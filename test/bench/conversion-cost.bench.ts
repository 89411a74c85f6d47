// What one conversion makes PostgreSQL do, counted (not timed, so a busy machine does not change it): BENCH_CONVERSIONS
// (default 500) Purchases through POST /api/v1/conversions/automation to all eight platform fakes, CONCURRENCY at a
// time, on a fresh database of the machine's PostgreSQL; then, per conversion: statements by kind, transactions,
// rows per table with index entries written, WAL records and bytes of the database (pg-cost.ts). BENCH_PREFILL=<n>
// stores n conversions with their deliveries first, for the cost on tables larger than PostgreSQL's buffers.
// Run: npm run bench:conversion-cost (needs PostgreSQL at BENCH_DATABASE_URL as superuser, and its log readable).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { PLATFORMS, startAllPlatforms } from '../fakes/all-platforms.ts'
import { createKey, freshPostgres, PG_URL, purchaseBody, startDcgate } from './support.ts'
import { benchClient, costBetween, prepareCounting, printCost, snapshot } from './pg-cost.ts'

const CONVERSIONS = Number(process.env.BENCH_CONVERSIONS ?? 500)
/** Conversions (each with eight sent deliveries) stored before the run, for the cost on tables that outgrow memory. */
const PREFILL = Number(process.env.BENCH_PREFILL ?? 0)
const CONCURRENCY = 20

const database = await freshPostgres()
if (!database) {
  console.log(`PostgreSQL at ${PG_URL} unreachable: nothing measured`)
  process.exit(0)
}
const platforms = await startAllPlatforms()
try {
  await prepareCounting(database.url)
  const dcgate = await startDcgate({ plugins: ['intake'], sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], destinations: platforms.destinations }] }, database.url)
  try {
    const key = await createKey(dcgate.url, readFileSync(join(dcgate.dataDir, 'admin-token'), 'utf8').trim())
    if (PREFILL > 0) await prefill(database.url, PREFILL)
    // A few first, so the figures leave out what happens once (plans, prepared statements, platform tokens).
    await send(dcgate.url, key, CONCURRENCY)
    await settled(database.url)
    // An idle connection reports its counts to the shared statistics within 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL).
    await new Promise((resolve) => setTimeout(resolve, 11_000))
    const before = await snapshot(database.url)
    const statuses = await send(dcgate.url, key, CONVERSIONS)
    await settled(database.url)
    // Stopped, so each connection's statistics reach the shared counters.
    await dcgate.stop()
    const after = await snapshot(database.url)
    console.log(`answers: ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}`)
    printCost(`PostgreSQL, ${PLATFORMS.length} platforms, ${CONCURRENCY} at a time`, await costBetween(database.url, before, after), CONVERSIONS)
  }
  finally {
    await dcgate.stop()
    dcgate.remove()
  }
}
finally {
  await platforms.close()
  await database.drop()
}

/** `count` conversions of yesterday, each with a sent delivery per platform (random ids, as dcgate wrote them before). */
async function prefill(url: string, count: number): Promise<void> {
  const client = benchClient(url)
  await client.connect()
  try {
    await client.query(`insert into conversions (id, site_id, message_id, trust, source, source_event_type, event, state, occurred_at, channel, items,
        identity, click_ids, consent, is_bot, confirmation, created_at)
      select gen_random_uuid(), 'shop', 'prefill-' || n, 'trusted', 'automation', 'automation', 'Purchase', 'accepted', now() - interval '1 day', 'online',
        '[]', '{}', '{}', 'unknown', false, 'tracked', now() - interval '1 day' from generate_series(1, $1::int) n`, [count])
    await client.query(`insert into deliveries (id, conversion_id, site_id, provider, status, attempts, sent_at, created_at)
      select gen_random_uuid(), c.id, c.site_id, p, 'sent', 1, c.created_at, c.created_at from conversions c
      cross join unnest($1::text[]) p where c.message_id like 'prefill-%'`, [PLATFORMS])
    await client.query('checkpoint')
  }
  finally {
    await client.end()
  }
}

/** `count` Purchases, CONCURRENCY at a time; the answers' statuses counted. */
async function send(url: string, key: string, count: number): Promise<Map<number, number>> {
  const statuses = new Map<number, number>()
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      const response = await fetch(`${url}/api/v1/conversions/automation`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: purchaseBody(randomBytes(6).toString('hex')),
      })
      await response.arrayBuffer()
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  return statuses
}

/** Until no delivery is left to attempt (at most 60 s): the worker's statements belong to the conversions too. */
async function settled(url: string): Promise<void> {
  const client = benchClient(url)
  await client.connect()
  try {
    for (let i = 0; i < 240; i++) {
      const { rows } = await client.query<{ n: string }>(`select count(*) as n from deliveries where status in ('pending', 'retrying')`)
      if (rows[0]!.n === '0') return
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    console.log('deliveries still pending after 60 s')
  }
  finally {
    await client.end()
  }
}

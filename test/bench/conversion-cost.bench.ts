// What one conversion makes PostgreSQL do, counted (not timed, so a busy machine does not change it): BENCH_CONVERSIONS
// (default 500) Purchases through POST /api/v1/conversions/automation to all eight platform fakes, CONCURRENCY at a
// time, on a fresh database of the machine's PostgreSQL; then, per conversion: statements by kind, transactions,
// rows per table with index entries written, WAL records and bytes of the database (pg-cost.ts).
// Run: npm run bench:conversion-cost (needs PostgreSQL at BENCH_DATABASE_URL as superuser, and its log readable).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { PLATFORMS, startAllPlatforms } from '../fakes/all-platforms.ts'
import { createKey, freshPostgres, PG_URL, purchaseBody, startDcgate } from './support.ts'
import { benchClient, costBetween, prepareCounting, printCost, snapshot } from './pg-cost.ts'

const CONVERSIONS = Number(process.env.BENCH_CONVERSIONS ?? 500)
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

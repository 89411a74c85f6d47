// Conversions through POST /api/v1/conversions/automation to the Meta and Google Ads fakes, sustained, on real
// PostgreSQL and on the embedded database, beside a bare h3 POST route measured in the same run.
// Run: npm run bench:conversions (BENCH_SECONDS=30 by default; needs PostgreSQL at BENCH_DATABASE_URL or
// postgresql://postgres@127.0.0.1:5432/postgres, skipped with a note when unreachable).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { PLATFORMS, startAllPlatforms, type PlatformName } from '../fakes/all-platforms.ts'
import { CLIENTS, PER_STATEMENT, measureRowFloor, type Floor } from './pg-floor.ts'
import { CONNECTIONS, PG_URL, SECONDS, WARMUP_SECONDS, freshPostgres, gcSummary, loadAverage, measure, printRssSamples, printTable, startBareH3, startDcgate, stopProcess, type Figures, type Load, createKey, purchaseBody } from './support.ts'

const platforms = await startAllPlatforms()
const TWO: readonly PlatformName[] = ['meta', 'google_ads']
// BENCH_ROWS picks rows (default all: bare,postgres,postgres8,embedded), e.g. BENCH_ROWS=postgres8 to profile one.
const ROWS = new Set((process.env.BENCH_ROWS ?? 'bare,postgres,postgres8,embedded').split(','))
const results: Figures[] = []
const requestsPerConversion = new Map<string, number>()
let floor: Floor | null = null
if (ROWS.has('bare')) results.push(await benchBare())
for (const [row, label, connected] of [['postgres', 'dcgate on PostgreSQL', TWO], ['postgres8', 'PostgreSQL, 8 platforms', PLATFORMS]] as const) {
  if (!ROWS.has(row)) continue
  const pgUrl = await freshPostgres()
  if (pgUrl) {
    try {
      results.push(await benchDcgate(label, pgUrl.url, connected))
      // On the database dcgate has just filled: the rows its conversions left, and nothing else (pg-floor.ts).
      if (row === 'postgres8') floor = await measureRowFloor(pgUrl.url, new URL(pgUrl.url).pathname.slice(1), SECONDS)
    }
    finally {
      await pgUrl.drop()
    }
  }
  else console.log(`PostgreSQL at ${PG_URL} unreachable: the row "${label}" is skipped`)
}
if (ROWS.has('embedded')) results.push(await benchDcgate('dcgate on embedded PGlite', undefined, TWO))
await platforms.close()
print(results)

async function benchBare(): Promise<Figures> {
  const bare = await startBareH3('/conversions', `async (event) => { const body = await readBody(event); event.res.status = 202; return { accepted: true, source: 'automation', events: [{ messageId: body.messageId, success: true, message: 'sent to 2 platforms' }] } }`)
  return measure('bare h3 POST (baseline)', bare.child, purchases(bare.url, null)).finally(() => stopProcess(bare.child))
}

async function benchDcgate(label: string, databaseUrl: string | undefined, connected: readonly PlatformName[]): Promise<Figures> {
  const destinations = Object.fromEntries(connected.map((name) => [name, platforms.destinations[name]]))
  const dcgate = await startDcgate({ plugins: ['intake', 'export'], ...(process.env.BENCH_DELIVERY ? { delivery: JSON.parse(process.env.BENCH_DELIVERY) } : {}), sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], destinations }] }, databaseUrl)
  try {
    const key = await createKey(dcgate.url, readFileSync(join(dcgate.dataDir, 'admin-token'), 'utf8').trim())
    const before = platforms.acceptedCounts()
    const requestsBefore = platforms.requestCount()
    const database = databaseUrl ? new URL(databaseUrl).pathname.slice(1) : undefined
    const figures = await measure(label, dcgate.child, purchases(`${dcgate.url}/api/v1/conversions/automation`, key, database))
    console.log(`${label}: ${await gcSummary(dcgate.url)}`)
    // Events a platform's request budget left to the worker are sent within seconds: wait for them, then check that
    // every acknowledged conversion reached every connected fake, or the figure would count conversions that failed.
    const delivered = await waitForDelivery(connected, before, figures.answered)
    const requests = platforms.requestCount() - requestsBefore
    requestsPerConversion.set(label, requests / Math.max(1, figures.answered))
    console.log(`${label}: ${figures.answered} conversions answered 202 (warm-up included); accepted by the fakes: ${connected.map((name) => `${name} ${delivered[name]}`).join(', ')}; ${requests} platform requests`)
    await saveMetrics(label, dcgate.url)
    return figures
  }
  finally {
    await dcgate.stop()
    dcgate.remove()
  }
}

/**
 * The server's GET /metrics after the row (loopback needs no token), written to .tmp/bench-metrics-<row>.prom for
 * the operator's eye and the deployment guide's sample; the conversion and delivery counters are printed.
 */
async function saveMetrics(label: string, url: string): Promise<void> {
  const text = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.text()).catch((error: unknown) => `# scrape failed: ${String(error)}`)
  const file = join('.tmp', `bench-metrics-${label.replace(/[^\w]+/g, '-').replace(/^-|-$/g, '')}.prom`)
  mkdirSync('.tmp', { recursive: true })
  writeFileSync(file, text)
  const counters = text.split('\n').filter((line) => /^dcgate_(conversions|deliveries)_total\{/.test(line))
  console.log(`${label}: GET /metrics written to ${file}\n  ${counters.join('\n  ')}`)
}

/** Accepted counts per fake once each has taken `answered` more events, or after 60 s of waiting. */
async function waitForDelivery(connected: readonly PlatformName[], before: Record<PlatformName, number>, answered: number): Promise<Record<PlatformName, number>> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const now = platforms.acceptedCounts()
    const delivered = Object.fromEntries(connected.map((name) => [name, now[name] - before[name]])) as Record<PlatformName, number>
    if (connected.every((name) => delivered[name] >= answered) || Date.now() > deadline) return delivered
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** Each request a new Purchase: its own messageId, email, gclid and fbclid. */
function purchases(url: string, key: string | null, database?: string): Load {
  let n = 0
  return {
    url,
    database,
    // 202 only: a 207 is a conversion some platform refused or that could not be sent, printed apart.
    counts: 202,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-dc-key': key } : {}) },
    next: () => ({ body: purchaseBody(`${randomBytes(4).toString('hex')}-${n++}`) }),
  }
}

function print(rows: Figures[]): void {
  console.log(`\nconversions benchmark: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per row, keep-alive; two platforms (Meta, Google Ads) or all eight, fakes in the bench process`)
  console.log('servers run in their own process; autocannon and the fakes share this one; 2-core machine')
  console.log(`load average at the end: ${loadAverage()}`)
  printTable(rows, 'conv')
  printRssSamples(rows)
  for (const [label, ratio] of requestsPerConversion) console.log(`platform requests per conversion, ${label}: ${ratio.toFixed(3)}`)
  const verdict = (label: string, perSecond: number, p99: number) => {
    const row = rows.find((r) => r.label === label)
    if (row) console.log(`target ${label}: >= ${perSecond} conv/s and p99 < ${p99} ms: ${row.perSecond >= perSecond && row.p99 < p99 ? 'PASS' : 'BELOW TARGET'}`)
  }
  const eight = rows.find((r) => r.label === 'PostgreSQL, 8 platforms')
  if (floor && eight) {
    console.log(`the rows alone, same database, same run (a conversion and its eight sent deliveries, every index, synchronous commit, ${PER_STATEMENT} per statement, ${CLIENTS} connections): ${Math.round(floor.perSecond)} conv/s, postgres cpu ${floor.postgresCpuMs.toFixed(3)} ms/conv; dcgate's ${eight.postgresCpuMs.toFixed(3)} is ${(eight.postgresCpuMs / floor.postgresCpuMs).toFixed(2)}× the floor`)
  }
  verdict('dcgate on PostgreSQL', 500, 100)
  verdict('PostgreSQL, 8 platforms', 1000, 150)
}

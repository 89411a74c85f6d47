// Conversions through POST /api/v1/conversions/automation to the Meta and Google Ads fakes, sustained, on real
// PostgreSQL and on the embedded database, beside a bare h3 POST route measured in the same run.
// Run: npm run bench:conversions (BENCH_SECONDS=30 by default; needs PostgreSQL at BENCH_DATABASE_URL or
// postgresql://postgres@127.0.0.1:5432/postgres, skipped with a note when unreachable).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import autocannon, { type Result } from 'autocannon'
import { PLATFORMS, startAllPlatforms, type PlatformName } from '../fakes/all-platforms.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
const CONNECTIONS = 20
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const ROOT = new URL('../../', import.meta.url).pathname

interface Figures {
  label: string, perSecond: number, p50: number, p99: number, rssStartMb: number, rssEndMb: number, rssSamples: number[], non2xx: number, errors: number, total: number
  /** CPU ms per 2xx response: the server process, and every local postgres process (backends + background writers). */
  serverCpuMs: number, postgresCpuMs: number
  /** CPU ms per 2xx response of this process: autocannon plus the platform fakes, which share the machine. */
  benchCpuMs: number
}

const platforms = await startAllPlatforms()
const TWO: readonly PlatformName[] = ['meta', 'google_ads']
// BENCH_ROWS picks rows (default all: bare,postgres,postgres8,embedded), e.g. BENCH_ROWS=postgres8 to profile one.
const ROWS = new Set((process.env.BENCH_ROWS ?? 'bare,postgres,postgres8,embedded').split(','))
const results: Figures[] = []
if (ROWS.has('bare')) results.push(await bench('bare h3 POST (baseline)', await startBare(), null))
for (const [row, label, connected] of [['postgres', 'dcgate on PostgreSQL', TWO], ['postgres8', 'PostgreSQL, 8 platforms', PLATFORMS]] as const) {
  if (!ROWS.has(row)) continue
  const pgUrl = await freshPostgres()
  if (pgUrl) results.push(await benchDcgate(label, pgUrl.url, connected).finally(pgUrl.drop))
  else console.log(`PostgreSQL at ${PG_URL} unreachable: the row "${label}" is skipped`)
}
if (ROWS.has('embedded')) results.push(await benchDcgate('dcgate on embedded PGlite', undefined, TWO))
await platforms.close()
print(results)

async function benchDcgate(label: string, databaseUrl: string | undefined, connected: readonly PlatformName[]): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-bench-'))
  const port = 3400 + Math.floor(Math.random() * 500)
  const destinations = Object.fromEntries(connected.map((name) => [name, platforms.destinations[name]]))
  writeFileSync(join(dir, 'dcgate.config.mjs'), `export default ${JSON.stringify({ plugins: ['intake', 'export'], sites: [{ id: 'shop', name: 'Shop', destinations }] }, null, 2)}\n`)
  const { DATABASE_URL: _inherited, ...inherited } = process.env
  const env = { ...inherited, PORT: String(port), DCGATE_DATA_DIR: join(dir, 'data'), DCGATE_LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each dcgate server there, for finding hot spots.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(process.execPath, [...profile, 'core/cli/bin.mjs', 'start', '--config', join(dir, 'dcgate.config.mjs')], { cwd: ROOT, env, stdio: 'ignore' })
  try {
    const url = `http://127.0.0.1:${port}`
    await waitFor(`${url}/openapi.json`)
    const key = await createKey(url, readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim())
    const before = platforms.acceptedCounts()
    const figures = await bench(label, { url: `${url}/api/v1/conversions/automation`, child }, key)
    const after = platforms.acceptedCounts()
    // Every 2xx must have reached every connected fake, or the figure would count conversions that failed.
    console.log(`${label}: ${figures.total} conversions answered 2xx in the measured run; accepted by the fakes, warm-up included: ${connected.map((name) => `${name} ${after[name] - before[name]}`).join(', ')}`)
    return figures
  }
  finally {
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('close', resolve))
    rmSync(dir, { recursive: true, force: true })
  }
}

async function bench(label: string, target: { url: string, child: ChildProcess }, key: string | null): Promise<Figures> {
  let n = 0
  const body = (id: string) => JSON.stringify({
    event: 'Purchase', messageId: id, properties: { value: 42.5, currency: 'USD', order_id: id },
    context: { traits: { email: `buyer-${id}@example.com`, phone: '+1 212 555 0142' }, identifiers: { gclid: `Cj0-${id}`, fbclid: `IwAR-${id}` }, ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (bench)' },
  })
  const run = (seconds: number, record: number[] | null) => new Promise<Result>((resolve, reject) => {
    const instance = autocannon({
      url: target.url, connections: CONNECTIONS, duration: seconds, timeout: 10,
      requests: [{ method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'x-dc-key': key } : {}) }, setupRequest: (request) => ({ ...request, body: body(`${randomBytes(4).toString('hex')}-${n++}`) }) }],
    }, (error, result) => (error ? reject(error) : resolve(result)))
    if (record) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => void (record.length < 2_000_000 && record.push(ms)))
  })
  await run(3, null)
  const rssStartMb = rss(target.child.pid!)
  const cpuBefore = { server: cpuMs(target.child.pid!), postgres: postgresCpuMs(), bench: process.cpuUsage() }
  const latencies: number[] = []
  // RSS every 5 s of the measured run, to tell a plateau from a leak.
  const rssSamples: number[] = []
  const sampler = setInterval(() => rssSamples.push(rss(target.child.pid!)), 5000)
  const result = await run(SECONDS, latencies).finally(() => clearInterval(sampler))
  const rssEndMb = rss(target.child.pid!)
  const ok = Math.max(1, result['2xx'])
  const serverCpuMs = (cpuMs(target.child.pid!) - cpuBefore.server) / ok
  const postgresCpu = (postgresCpuMs() - cpuBefore.postgres) / ok
  const benchUsage = process.cpuUsage(cpuBefore.bench)
  const benchCpuMs = (benchUsage.user + benchUsage.system) / 1000 / ok
  if (label.startsWith('bare')) target.child.kill('SIGTERM')
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0
  return { label, perSecond: result['2xx'] / result.duration, p50: pct(0.5), p99: pct(0.99), rssStartMb, rssEndMb, rssSamples, non2xx: result.non2xx, errors: result.errors + result.timeouts, total: result['2xx'], serverCpuMs, postgresCpuMs: postgresCpu, benchCpuMs }
}

async function startBare(): Promise<{ url: string, child: ChildProcess }> {
  const port = 3900 + Math.floor(Math.random() * 90)
  const source = `import { H3, serve, readBody } from 'h3'
const app = new H3()
app.post('/conversions', async (event) => { const body = await readBody(event); event.res.status = 202; return { accepted: true, source: 'automation', events: [{ messageId: body.messageId, success: true, message: 'sent to 2 platforms' }] } })
serve(app, { port: ${port}, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })`
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: ROOT, stdio: 'ignore' })
  await waitFor(`http://127.0.0.1:${port}/conversions`, 'POST')
  return { url: `http://127.0.0.1:${port}/conversions`, child }
}

async function freshPostgres(): Promise<{ url: string, drop: () => Promise<void> } | null> {
  const name = `dcgate_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  try {
    await admin.connect()
    await admin.query(`create database ${name}`)
  }
  catch {
    return null
  }
  finally {
    await admin.end().catch(() => {})
  }
  const url = new URL(PG_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    },
  }
}

async function createKey(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/admin/api/sites/shop/keys`, { method: 'POST', headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })
  return ((await response.json()) as { key: string }).key
}

async function waitFor(url: string, method = 'GET'): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(url, { method, body: method === 'POST' ? '{}' : undefined, headers: { 'content-type': 'application/json' } })
      return
    }
    catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not answer`)
}

function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? 'VmRSS: 0 kB'
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024)
}

/** User + system CPU time of a process so far, in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
  catch {
    return 0
  }
}

/** CPU time of every process named postgres on this machine (0 when PostgreSQL is elsewhere). */
function postgresCpuMs(): number {
  let total = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuMs(Number(pid))
    }
    catch { /* exited meanwhile */ }
  }
  return total
}

function print(rows: Figures[]): void {
  console.log(`\nconversions benchmark: ${CONNECTIONS} connections, 3 s warm-up + ${SECONDS} s measured per row, keep-alive; two platforms (Meta, Google Ads) or all eight, fakes in the bench process`)
  console.log('servers run in their own process; autocannon and the fakes share this one; 2-core machine')
  console.log(`load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`)
  console.log('row                          conv/s   p50 ms   p99 ms   RSS start→end MB   2xx      non2xx  errors   server cpu ms/conv   postgres cpu ms/conv   bench cpu ms/conv')
  for (const r of rows) {
    const cpu = `${r.serverCpuMs.toFixed(2).padStart(18)}   ${r.label.includes('PostgreSQL') ? r.postgresCpuMs.toFixed(2).padStart(20) : '                   -'}   ${r.benchCpuMs.toFixed(2).padStart(17)}`
    console.log(`${r.label.padEnd(28)} ${r.perSecond.toFixed(0).padStart(6)}   ${r.p50.toFixed(1).padStart(6)}   ${r.p99.toFixed(1).padStart(6)}   ${`${r.rssStartMb}→${r.rssEndMb}`.padStart(16)}   ${String(r.total).padEnd(8)} ${String(r.non2xx).padEnd(7)} ${r.errors.toString().padEnd(7)}  ${cpu}`)
  }
  for (const r of rows) console.log(`RSS every 5 s, ${r.label}: ${r.rssSamples.join(' ')} MB`)
  const verdict = (label: string, perSecond: number, p99: number) => {
    const row = rows.find((r) => r.label === label)
    if (row) console.log(`target ${label}: >= ${perSecond} conv/s and p99 < ${p99} ms: ${row.perSecond >= perSecond && row.p99 < p99 ? 'PASS' : 'BELOW TARGET'}`)
  }
  verdict('dcgate on PostgreSQL', 500, 100)
  verdict('PostgreSQL, 8 platforms', 300, 150)
}

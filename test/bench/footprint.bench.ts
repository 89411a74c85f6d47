// dcgate's footprint on each database beside a bare node:http server, in one run: start-to-ready time (on a fresh
// data dir or database, and again on the one the first start made), RSS idle after BENCH_IDLE_SECONDS, and RSS over a
// /collect load and a conversions load of BENCH_SECONDS each (issue 26).
// Run: npm run bench:footprint (20 s idle + 2 × (3 s warm-up + 60 s) + 45 s idle per server, about 10 minutes; BENCH_IDLE_SECONDS=5
// BENCH_SECONDS=10 for a quick run; BENCH_ROWS=bare,postgres,embedded picks rows; PostgreSQL at BENCH_DATABASE_URL or
// postgresql://postgres@127.0.0.1:5432/postgres gets a fresh database, skipped with a note when unreachable).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { CollectBody } from '../../plugins/capture/protocol.ts'
import { startAllPlatforms } from '../fakes/all-platforms.ts'
import { MEMORY_MODE_POLICY } from '../../core/memory-mode.ts'
import { CONNECTIONS, PG_URL, ROOT, WARMUP_SECONDS, freshPostgres, loadAverage, measure, rss, sleep, stopProcess, type Figures, type Load } from './support.ts'

const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 20)
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 60)
const ROWS = new Set((process.env.BENCH_ROWS ?? 'bare,postgres,embedded').split(','))
/** Issue 26's targets: RSS after the idle wait, and start-to-ready on an existing data dir. */
const TARGETS = { postgres: { idleMb: 150, readyS: 1.5 }, embedded: { idleMb: 350, readyS: 3 } } as const
const FLAT = 0.1
/** After the loads: long enough for a busy server to turn V8's memory saver back on (core/memory-mode.ts) and collect. */
const AFTER_SECONDS = MEMORY_MODE_POLICY.idleSamples + 15
const COP_KEY = 'footprint-cop-key-0123456789'
const ORIGIN = 'https://shop.example'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'

interface Row {
  label: string
  readyFreshS: number
  /** Start-to-ready on the data dir (or database) the first start made; undefined for the bare server. */
  readyExistingS?: number
  rssReadyMb: number
  rssIdleMb: number
  collect: Figures
  conversions: Figures
  /** RSS AFTER_SECONDS after the last load. */
  rssAfterMb: number
}

/** A server process as the bench runs it: where it answers and how long it took from spawn to its ready URL's 200. */
interface Started { child: ChildProcess, url: string, readyS: number }

const platforms = await startAllPlatforms()
const loadAtStart = loadAverage()
const rows: Row[] = []
try {
  if (ROWS.has('bare')) rows.push(await benchBare())
  if (ROWS.has('postgres')) {
    const database = await freshPostgres()
    if (database) rows.push(await benchDcgate('dcgate on PostgreSQL', database.url).finally(database.drop))
    else console.log(`PostgreSQL at ${PG_URL} unreachable: the row "dcgate on PostgreSQL" is skipped`)
  }
  if (ROWS.has('embedded')) rows.push(await benchDcgate('dcgate on embedded PGlite', undefined))
}
finally {
  await platforms.close()
}
print(rows)

async function benchBare(): Promise<Row> {
  const port = 3900 + Math.floor(Math.random() * 90)
  // Reads each body and answers 202 with a small JSON, as dcgate's two routes do; any GET is 200 (its /readyz).
  const source = `import { createServer } from 'node:http'
createServer((request, response) => {
  const chunks = []
  request.on('data', (chunk) => chunks.push(chunk)).on('end', () => {
    response.writeHead(request.method === 'POST' ? 202 : 200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ ok: true, bytes: Buffer.concat(chunks).length }))
  })
}).listen(${port}, '127.0.0.1')`
  // A .mjs file: `node -e` would load Node's TypeScript stripper (about 17 MB) to read the source.
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-footprint-bare-'))
  writeFileSync(join(dir, 'server.mjs'), source)
  const server = await startUntilReady([join(dir, 'server.mjs')], {}, `http://127.0.0.1:${port}`)
  try {
    return await measureServer('bare node:http', server, `${server.url}/collect`, `${server.url}/conversions`, null)
  }
  finally {
    await stopProcess(server.child)
    rmSync(dir, { recursive: true, force: true })
  }
}

/** dcgate as `dcgate start`, every built-in plugin, one site connected to the Meta and Google Ads fakes. */
async function benchDcgate(label: string, databaseUrl: string | undefined): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-footprint-'))
  const configFile = join(dir, 'dcgate.config.mjs')
  const port = 3400 + Math.floor(Math.random() * 500)
  const config = {
    plugins: ['capture', 'intake', 'release', 'export', 'dsar', 'email-risk', 'segment', 'dashboard'],
    server: { trustProxy: true },
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], copKey: COP_KEY, destinations: { meta: platforms.destinations.meta, google_ads: platforms.destinations.google_ads } }],
  }
  writeFileSync(configFile, `export default ${JSON.stringify(config, null, 2)}\n`)
  const { DATABASE_URL: _inherited, ...inherited } = process.env
  const env = { ...inherited, PORT: String(port), DCGATE_DATA_DIR: join(dir, 'data'), DCGATE_LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const start = () => startUntilReady(['bin/dcgate.mjs', 'start', '--config', configFile], env, `http://127.0.0.1:${port}`, '/readyz')
  try {
    const server = await start()
    let row: Row
    try {
      const token = readFileSync(join(dir, 'data', 'admin-token'), 'utf8').trim()
      row = await measureServer(label, server, `${server.url}/collect?cop_key=${COP_KEY}`, `${server.url}/api/v1/conversions/automation`, await createKey(server.url, token))
    }
    finally {
      await stopProcess(server.child)
    }
    const again = await start()
    await stopProcess(again.child)
    return { ...row, readyExistingS: again.readyS }
  }
  finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function measureServer(label: string, server: Started, collectUrl: string, conversionsUrl: string, key: string | null): Promise<Row> {
  const pid = server.child.pid!
  const rssReadyMb = rss(pid)
  await sleep(IDLE_SECONDS * 1000)
  const rssIdleMb = rss(pid)
  console.log(`${label}: ready in ${server.readyS.toFixed(2)} s, RSS ${rssReadyMb} MB at ready, ${rssIdleMb} MB after ${IDLE_SECONDS} s idle`)
  const collect = await measure(`${label} /collect`, server.child, hits(collectUrl), LOAD_SECONDS)
  const conversions = await measure(`${label} conversions`, server.child, purchases(conversionsUrl, key), LOAD_SECONDS)
  await sleep(AFTER_SECONDS * 1000)
  return { label, readyFreshS: server.readyS, rssReadyMb, rssIdleMb, collect, conversions, rssAfterMb: rss(pid) }
}

/** Spawns `node <args>` from the repo root and polls `<url><readyPath>` every 20 ms until it answers 200. */
async function startUntilReady(args: string[], env: NodeJS.ProcessEnv, url: string, readyPath = '/'): Promise<Started> {
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'ignore' })
  for (let waited = 0; waited < 120_000; waited += 20) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode} before it was ready`)
    const status = await fetch(`${url}${readyPath}`).then((response) => response.status, () => 0)
    if (status === 200) return { child, url, readyS: (performance.now() - spawnedAt) / 1000 }
    await sleep(20)
  }
  await stopProcess(child)
  throw new Error(`${url}${readyPath} did not answer 200 within 120 s`)
}

/** Page views of 5,000 visitors, each from an address of its own, as the tracking script sends them. */
function hits(url: string): Load {
  const visitors = Array.from({ length: 5000 }, (_, i) => ({ sid: `s-${i}-${randomBytes(6).toString('hex')}`, vid: `v-${i}-${randomBytes(6).toString('hex')}`, ip: `${[73, 86, 91, 90, 177, 126][i % 6]}.${(i >> 8) & 255}.${i & 255}.${1 + (i % 250)}` }))
  let n = 0
  const body = (visitor: typeof visitors[number]): CollectBody => ({
    v: 1, sid: visitor.sid, vid: visitor.vid,
    hits: [{ t: 'pageview', hid: `hit-${(++n).toString(36).padStart(8, '0')}`, ts: Date.now(), url: `${ORIGIN}/products/${n % 40}`, title: 'A product' }],
    consent: 'granted', signals: { interactions: 3, sinceLoadMs: 4000, firstInteractionMs: 900 },
    screen: { w: 1920, h: 1080 }, lang: 'en-US', tz: 'Europe/Berlin',
  })
  v.parse(CollectBody, body(visitors[0]!))
  return {
    url,
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'origin': ORIGIN },
    next: () => {
      const visitor = visitors[Math.floor(Math.random() * visitors.length)]!
      return { body: JSON.stringify(body(visitor)), headers: { 'x-forwarded-for': visitor.ip } }
    },
  }
}

/** Each request a new Purchase with its own messageId, email, gclid and fbclid (the conversions bench's load). */
function purchases(url: string, key: string | null): Load {
  let n = 0
  return {
    url,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-dc-key': key } : {}) },
    next: () => {
      const id = `${randomBytes(4).toString('hex')}-${n++}`
      return {
        body: JSON.stringify({
          event: 'Purchase', messageId: id, properties: { value: 42.5, currency: 'USD', order_id: id },
          context: { traits: { email: `buyer-${id}@example.com`, phone: '+1 212 555 0142' }, identifiers: { gclid: `Cj0-${id}`, fbclid: `IwAR-${id}` }, ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (bench)' },
        }),
      }
    },
  }
}

async function createKey(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/admin/api/sites/shop/keys`, { method: 'POST', headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'footprint' }) })
  return ((await response.json()) as { key: string }).key
}

/** RSS from the start of the measured run to its end, its highest sample, and whether the end is within 10 % of the start. */
function rssCell(f: Figures): string {
  const highest = Math.max(f.rssStartMb, f.rssEndMb, ...f.rssSamples)
  const flat = Math.abs(f.rssEndMb - f.rssStartMb) <= FLAT * f.rssStartMb
  return `${f.rssStartMb}→${f.rssEndMb} (max ${highest}) ${flat ? 'flat' : 'NOT FLAT'}`
}

function print(results: Row[]): void {
  console.log(`\nfootprint benchmark, Node ${process.version}: ${IDLE_SECONDS} s idle, then /collect and conversions, ${WARMUP_SECONDS} s warm-up + ${LOAD_SECONDS} s each, ${CONNECTIONS} connections`)
  console.log(`servers run in their own process; the load generator and the platform fakes share this one; load average ${loadAtStart} at the start, ${loadAverage()} at the end`)
  console.log(`${'server'.padEnd(26)} ${'ready fresh'.padStart(11)} ${'ready again'.padStart(11)} ${'RSS ready'.padStart(9)} ${`RSS idle ${IDLE_SECONDS}s`.padStart(12)}   ${'/collect req/s'.padStart(14)}  ${'/collect RSS MB'.padEnd(28)}  ${'conv/s'.padStart(6)}  ${'conversions RSS MB'.padEnd(28)}  RSS ${AFTER_SECONDS} s after`)
  for (const r of results) {
    const again = r.readyExistingS === undefined ? '-' : `${r.readyExistingS.toFixed(2)} s`
    console.log(`${r.label.padEnd(26)} ${`${r.readyFreshS.toFixed(2)} s`.padStart(11)} ${again.padStart(11)} ${`${r.rssReadyMb} MB`.padStart(9)} ${`${r.rssIdleMb} MB`.padStart(12)}   ${r.collect.perSecond.toFixed(0).padStart(14)}  ${rssCell(r.collect).padEnd(28)}  ${r.conversions.perSecond.toFixed(0).padStart(6)}  ${rssCell(r.conversions).padEnd(28)}  ${r.rssAfterMb} MB`)
  }
  for (const r of results) {
    for (const f of [r.collect, r.conversions]) {
      console.log(`RSS every 5 s, ${f.label}: ${f.rssSamples.join(' ')} MB; ${f.total} 2xx, ${f.non2xx} non-2xx, ${f.errors} errors`)
    }
  }
  for (const [kind, target] of Object.entries(TARGETS)) {
    const row = results.find((r) => r.label.includes(kind === 'postgres' ? 'PostgreSQL' : 'embedded'))
    if (!row) continue
    const idle = row.rssIdleMb <= target.idleMb ? 'PASS' : 'ABOVE TARGET'
    const ready = (row.readyExistingS ?? Infinity) <= target.readyS ? 'PASS' : 'ABOVE TARGET'
    console.log(`target ${row.label}: idle RSS <= ${target.idleMb} MB: ${row.rssIdleMb} MB ${idle}; ready on an existing data dir <= ${target.readyS} s: ${row.readyExistingS?.toFixed(2)} s ${ready}`)
  }
  if (results.some((r) => [r.collect, r.conversions].some((f) => f.non2xx > 0 || f.errors > 0))) {
    console.log('some requests were not answered 2xx: the figures above do not describe a healthy run')
    process.exitCode = 1
  }
}

// POST /collect, the tracking script's hits, sustained, on real PostgreSQL and on the embedded database, beside a
// bare h3 JSON POST route measured in the same run; then checks that every acknowledged hit was stored.
// Run: npm run bench:collect (BENCH_ROUNDS=3 rounds of BENCH_SECONDS=15 per server; BENCH_ROWS=bare,postgres,embedded picks rows; needs
// PostgreSQL at BENCH_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres, skipped with a note when
// unreachable; BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each dcgate server there; BENCH_PLUGINS=capture,dashboard
// loads more plugins than capture alone).
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import * as v from 'valibot'
import { CollectBody } from '../../plugins/capture/protocol.ts'
import { CONNECTIONS, PG_URL, SECONDS, WARMUP_SECONDS, freshPostgres, gcSummary, loadAverage, measure, printRssSamples, printTable, sleep, startBareH3, startDcgate, stopProcess, type Figures, type Load } from './support.ts'

const ORIGIN = 'https://shop.example'
const COP_KEY = 'bench-cop-key-0123456789'
/** Simulated visitors, each with one session: a run of 15 s or more gives every visit several hits. */
const VISITORS = 5000
const FLUSH_INTERVAL_MS = 1000
const TARGET_RATIO = 0.6
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const CONFIG = {
  plugins: (process.env.BENCH_PLUGINS ?? 'capture').split(','),
  server: { trustProxy: true },
  capture: { flushIntervalMs: FLUSH_INTERVAL_MS },
  sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], copKey: COP_KEY }],
}
const ROW_LABELS = { bare: 'bare h3 POST', postgres: 'dcgate on PostgreSQL', embedded: 'dcgate on embedded PGlite' } as const
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const PAGES = [
  ['/', 'Shop — Home'], ['/products', 'All products'], ['/products/linen-shirt', 'Linen shirt'], ['/products/wool-coat', 'Wool coat'],
  ['/products/canvas-bag', 'Canvas bag'], ['/products/leather-boots', 'Leather boots'], ['/cart', 'Your cart'], ['/checkout', 'Checkout'],
  ['/blog/summer-lookbook', 'Summer lookbook'], ['/blog/care-guide', 'How to care for linen'], ['/about', 'About us'], ['/contact', 'Contact'],
] as const
const LANDING_REFERRERS = ['https://www.google.com/', 'https://www.bing.com/', 'https://l.facebook.com/', 'https://news.example/best-shops', '']
/** Countries by first octet (checked against the bundled geo data): mostly residential ISPs, a few Google Cloud hosts. */
const IP_PREFIXES = [
  { octet: 73, weight: 20, lang: 'en-US', tz: 'America/New_York' }, // Comcast, US
  { octet: 98, weight: 10, lang: 'en-US', tz: 'America/Chicago' }, // Comcast, Charter, Cox, US
  { octet: 24, weight: 8, lang: 'en-US', tz: 'America/Los_Angeles' }, // US cable
  { octet: 86, weight: 10, lang: 'en-GB', tz: 'Europe/London' }, // BT, Virgin Media, Orange
  { octet: 91, weight: 8, lang: 'de-DE', tz: 'Europe/Berlin' }, // Deutsche Telekom
  { octet: 90, weight: 8, lang: 'fr-FR', tz: 'Europe/Paris' }, // Orange
  { octet: 79, weight: 6, lang: 'it-IT', tz: 'Europe/Rome' }, // Telecom Italia, Telekom
  { octet: 177, weight: 8, lang: 'pt-BR', tz: 'America/Sao_Paulo' }, // Brazil
  { octet: 187, weight: 6, lang: 'es-MX', tz: 'America/Mexico_City' }, // Mexico, Brazil
  { octet: 126, weight: 8, lang: 'ja-JP', tz: 'Asia/Tokyo' }, // SoftBank, Japan
  { octet: 49, weight: 6, lang: 'en-IN', tz: 'Asia/Kolkata' }, // Asia-Pacific
  { octet: 34, weight: 2, lang: 'en-US', tz: 'UTC' }, // Google Cloud: hosting
] as const
const SCREENS = [{ w: 1920, h: 1080 }, { w: 1536, h: 864 }, { w: 2560, h: 1440 }, { w: 1366, h: 768 }, { w: 1440, h: 900 }]
const COUNT_STORED = `select
  (select count(*) from page_events)::int as page_events,
  (select count(*) from page_events where session_id is not null)::int as session_events,
  (select count(*) from visits)::int as visits,
  (select coalesce(sum(page_count), 0) from visits)::int as visit_pages`

interface Visitor {
  sid: string
  vid: string
  ip: string
  consent: 'granted' | 'unknown' | 'denied'
  clickIds?: Record<string, string>
  device?: { hash: string, short: string, confidence: number, version: number }
  lang: string
  tz: string
  screen: { w: number, h: number }
  /** The page before the next one: the referrer of the next page view. */
  lastUrl: string
}

/** What one dcgate row left in its database, against what its server acknowledged. */
interface Persistence {
  label: string
  answered: number
  unanswered: number
  pageEvents: number
  sessionEvents: number
  visits: number
  visitPages: number
  when: string
}

const random = seededRandom(20261121)
let hitCount = 0
const visitors = Array.from({ length: VISITORS }, makeVisitor)
checkBodiesMatchProtocol()
const ROWS = new Set((process.env.BENCH_ROWS ?? 'bare,postgres,embedded').split(','))
const loadAtStart = loadAverage()
/** Every measured run in order: bare, dcgate, bare, dcgate, …, bare. */
const runs: Run[] = []
const persisted: Persistence[] = []
const bare = ROWS.has('bare') ? await startBareH3('/collect', `async (event) => { await readBody(event); event.res.status = 202; return { ok: true, consent: { required: false, banner: 'eu' } } }`) : undefined
try {
  if (ROWS.has('postgres')) await benchOnPostgres()
  if (ROWS.has('embedded')) await benchDcgate('embedded', undefined, 1)
  await measureBare()
}
finally {
  if (bare) await stopProcess(bare.child)
}
print(runs, persisted)
if (!runSound(runs.map((r) => r.figures), persisted)) process.exitCode = 1

interface Run { kind: 'bare' | 'postgres' | 'embedded', figures: Figures }

/**
 * A bare run before every dcgate run (and one after the last): this VM's speed drifts by tens of percent within
 * minutes, so each dcgate run is compared with the bare runs on either side of it.
 */
async function measureBare(): Promise<void> {
  if (!bare) return
  const round = runs.filter((r) => r.kind === 'bare').length + 1
  runs.push({ kind: 'bare', figures: await measure(`${ROW_LABELS.bare} (${round})`, bare.child, hits(bare.url)) })
}

async function benchOnPostgres(): Promise<void> {
  const database = await freshPostgres()
  if (!database) {
    console.log(`PostgreSQL at ${PG_URL} unreachable: the row "${ROW_LABELS.postgres}" is skipped`)
    return
  }
  await benchDcgate('postgres', database.url, ROUNDS).finally(database.drop)
}

/**
 * One dcgate server, measured `rounds` times, each after a bare run. On PostgreSQL the rows are counted while the
 * server runs, a few flush intervals after the load; the embedded database can only be opened once the server has
 * exited, so there they are counted after a graceful stop (SIGTERM flushes the writer).
 */
async function benchDcgate(kind: 'postgres' | 'embedded', databaseUrl: string | undefined, rounds: number): Promise<void> {
  const dcgate = await startDcgate(CONFIG, databaseUrl)
  const label = ROW_LABELS[kind]
  try {
    const own: Figures[] = []
    for (let round = 1; round <= rounds; round++) {
      await measureBare()
      const figures = await measure(rounds > 1 ? `${label} (${round})` : label, dcgate.child, hits(`${dcgate.url}/collect?cop_key=${COP_KEY}`))
      runs.push({ kind, figures })
      own.push(figures)
      console.log(`${figures.label}: ${await gcSummary(dcgate.url)}`)
    }
    await sleep(3 * FLUSH_INTERVAL_MS)
    let counts: StoredCounts
    if (databaseUrl) counts = await countOnPostgres(databaseUrl)
    else {
      await dcgate.stop()
      counts = await countInPglite(join(dcgate.dataDir, 'db'))
    }
    const sum = (pick: (f: Figures) => number) => own.reduce((total, f) => total + pick(f), 0)
    const row: Persistence = { label, answered: sum((f) => f.answered), unanswered: sum((f) => f.unanswered), ...counts, when: databaseUrl ? `${3 * FLUSH_INTERVAL_MS} ms after the load, server running` : 'after a graceful stop' }
    persisted.push(row)
    console.log(persistenceLine(row))
  }
  finally {
    await dcgate.stop()
    dcgate.remove()
  }
}

/** The load: each request one page view of a visitor from the pool, as the script sends it (sendBeacon's text/plain). */
function hits(url: string): Load {
  return {
    url,
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'origin': ORIGIN },
    next: () => {
      const visitor = visitors[Math.floor(Math.random() * VISITORS)]!
      return { body: JSON.stringify(collectBody(visitor)), headers: { 'x-forwarded-for': visitor.ip } }
    },
  }
}

function collectBody(visitor: Visitor): CollectBody {
  const [path, title] = PAGES[Math.floor(Math.random() * PAGES.length)]!
  const url = `${ORIGIN}${path}`
  const ref = visitor.lastUrl
  visitor.lastUrl = url
  const interactions = Math.floor(Math.random() * 30)
  const sinceLoadMs = 300 + Math.floor(Math.random() * 20_000)
  return {
    v: 1,
    sid: visitor.sid,
    vid: visitor.vid,
    // The script names every hit (hid), so a hit sent again maps to the same stored row.
    hits: [{ t: 'pageview', hid: `hit-${(++hitCount).toString(36).padStart(8, '0')}`, ts: Date.now() - Math.floor(Math.random() * 500), url, ...(ref ? { ref } : {}), title }],
    ...(visitor.clickIds ? { clickIds: visitor.clickIds } : {}),
    consent: visitor.consent,
    signals: { interactions, sinceLoadMs, ...(interactions > 0 ? { firstInteractionMs: Math.floor(sinceLoadMs / 3) } : {}) },
    ...(visitor.device ? { device: visitor.device } : {}),
    screen: visitor.screen,
    lang: visitor.lang,
    tz: visitor.tz,
  }
}

function makeVisitor(): Visitor {
  const prefix = weighted(IP_PREFIXES)
  const ip = `${prefix.octet}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`
  const roll = random()
  const now = Date.now()
  const clickIds: Record<string, string> | undefined = roll < 0.15 ? { gclid: `Cj0KCQjw${token(40)}` }
    : roll < 0.25 ? { fbc: `fb.1.${now}.IwAR${token(40)}`, fbp: `fb.1.${now}.${Math.floor(random() * 1e10)}` }
      : undefined
  const hash = Array.from({ length: 64 }, () => Math.floor(random() * 16).toString(16)).join('')
  return {
    sid: token(22),
    vid: token(22),
    ip,
    consent: roll < 0.75 ? 'granted' : roll < 0.95 ? 'unknown' : 'denied',
    ...(clickIds ? { clickIds } : {}),
    ...(random() < 0.6 ? { device: { hash, short: hash.slice(0, 12), confidence: 0.9, version: 1 } } : {}),
    lang: prefix.lang,
    tz: prefix.tz,
    screen: SCREENS[Math.floor(random() * SCREENS.length)]!,
    lastUrl: LANDING_REFERRERS[Math.floor(random() * LANDING_REFERRERS.length)]!,
  }
}

/** The bodies this bench sends are valid /collect bodies (a protocol change shows here, not as 400s). */
function checkBodiesMatchProtocol(): void {
  for (const visitor of visitors.slice(0, 200)) v.parse(CollectBody, JSON.parse(JSON.stringify(collectBody({ ...visitor }))))
}

function weighted<T extends { weight: number }>(items: readonly T[]): T {
  let pick = random() * items.reduce((sum, item) => sum + item.weight, 0)
  for (const item of items) {
    pick -= item.weight
    if (pick < 0) return item
  }
  return items.at(-1)!
}

function token(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  return Array.from({ length }, () => alphabet[Math.floor(random() * 64)]).join('')
}

/** mulberry32: the same visitor pool in every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type StoredCounts = Pick<Persistence, 'pageEvents' | 'sessionEvents' | 'visits' | 'visitPages'>

interface CountRow { page_events: number, session_events: number, visits: number, visit_pages: number }

function toCounts(row: CountRow): StoredCounts {
  return { pageEvents: row.page_events, sessionEvents: row.session_events, visits: row.visits, visitPages: row.visit_pages }
}

async function countOnPostgres(url: string): Promise<StoredCounts> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return toCounts((await client.query<CountRow>(COUNT_STORED)).rows[0]!)
  }
  finally {
    await client.end()
  }
}

async function countInPglite(dir: string): Promise<StoredCounts> {
  const db = await PGlite.create(dir)
  try {
    return toCounts((await db.query<CountRow>(COUNT_STORED)).rows[0]!)
  }
  finally {
    await db.close()
  }
}

/** Nothing acknowledged lost, nothing stored twice: answered ≤ stored ≤ answered + requests in flight at the end. */
function persistenceHolds(row: Persistence): boolean {
  return row.pageEvents >= row.answered && row.pageEvents <= row.answered + row.unanswered && row.visitPages === row.sessionEvents
}

function persistenceLine(row: Persistence): string {
  return `${row.label}: ${row.answered} hits answered 2xx, ${row.pageEvents} page events stored (${row.when}; `
    + `${row.unanswered} request(s) were in flight when the load stopped and may be stored too); `
    + `${row.visits} visits counting ${row.visitPages} page views, page events with a session ${row.sessionEvents}: `
    + `${persistenceHolds(row) ? 'OK' : 'MISMATCH'}`
}

/** A row that answered anything but 2xx, or lost or doubled hits, makes the run fail. */
function runSound(rows: Figures[], stored: Persistence[]): boolean {
  const broken = rows.filter((r) => r.total === 0 || r.non2xx > 0 || r.errors > 0)
  for (const r of broken) console.log(`BENCHMARK FAILED: ${r.label} answered ${r.non2xx} non-2xx and ${r.errors} errors (${r.total} 2xx)`)
  const lost = stored.filter((row) => !persistenceHolds(row))
  for (const row of lost) console.log(`BENCHMARK FAILED: ${row.label}: ${row.answered} hits acknowledged, ${row.pageEvents} page events stored`)
  return broken.length === 0 && lost.length === 0
}

function print(all: Run[], stored: Persistence[]): void {
  const rows = all.map((r) => r.figures)
  console.log(`\ncollect benchmark: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per run, keep-alive; one page view per request`)
  console.log(`  from ${VISITORS} visitors (a session each), text/plain JSON, Chrome UA, X-Forwarded-For from public IPs (trustProxy); flushIntervalMs ${FLUSH_INTERVAL_MS}`)
  console.log(`servers run in their own process; autocannon shares this one; ${availableParallelism()}-core machine`)
  console.log(`runs in order: a bare run before each dcgate run and one after the last (${ROWS.has('postgres') ? `${ROUNDS} round(s) on PostgreSQL` : 'none on PostgreSQL'}${ROWS.has('embedded') ? ', one on PGlite' : ''})`)
  console.log(`load average at the start: ${loadAtStart}, at the end: ${loadAverage()}`)
  printTable(rows, 'req')
  printRssSamples(rows)
  for (const row of stored) console.log(persistenceLine(row))
  printRatios(all)
}

/** Each dcgate run against the mean of the bare runs just before and after it; the verdict takes the median round. */
function printRatios(all: Run[]): void {
  for (const kind of ['postgres', 'embedded'] as const) {
    const ratios = all.flatMap((run, i) => {
      const around = [all[i - 1], all[i + 1]].filter((r) => r?.kind === 'bare').map((r) => r!.figures.perSecond)
      if (run.kind !== kind || around.length === 0) return []
      const baseline = around.reduce((sum, x) => sum + x, 0) / around.length
      const ratio = run.figures.perSecond / baseline
      console.log(`${run.figures.label}: ${run.figures.perSecond.toFixed(0)} req/s, bare around it ${around.map((x) => x.toFixed(0)).join(' and ')} (mean ${baseline.toFixed(0)}): ratio ${ratio.toFixed(3)}`)
      return [ratio]
    })
    if (ratios.length === 0) continue
    const median = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!
    const verdict = kind === 'postgres' ? `   target >= ${TARGET_RATIO}: ${median >= TARGET_RATIO ? 'PASS' : 'BELOW TARGET'}` : '   (no target)'
    console.log(`ratio ${ROW_LABELS[kind]} / bare (req/s)${ratios.length > 1 ? `, median of ${ratios.length} rounds` : ''} = ${median.toFixed(3)}${verdict}`)
  }
}

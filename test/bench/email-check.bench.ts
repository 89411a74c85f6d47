// POST /api/v1/services/email/check, sustained: stored answers (emails the tracking script identified, with devices
// and visits) and live checks (a new address each request; RDAP and DNS answered by the fakes in this process), on
// real PostgreSQL and on the embedded database, beside a bare h3 POST route measured in the same run.
// Run: npm run bench:email-check (BENCH_SECONDS=30 by default; BENCH_ROWS=bare,postgres,embedded picks rows; needs
// PostgreSQL at BENCH_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres, skipped with a note when
// unreachable; BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each dcgate server there; BENCH_DEVICE_INDEX=1 adds the
// proposed index identified_users (site_id, device_hash) before the PostgreSQL rows measure). Target: a stored answer's p99 < 10 ms and its req/s >= 0.4 of the bare route's.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { startFakeDns } from '../fakes/dns.ts'
import { startFakeServer } from '../fakes/server.ts'
import { CONNECTIONS, PG_URL, ROOT, SECONDS, WARMUP_SECONDS, freshPostgres, loadAverage, measure, printRssSamples, printTable, startBareH3, stopProcess, waitFor, type Dcgate, type Figures, type Load } from './support.ts'

const COP_KEY = 'bench-cop-key-0123456789'
const IDENTIFIED = 2000
const TARGET = { p99Ms: 10, ratio: 0.4 }
const CORPORATE = ['northwind-traders.com', 'contoso-retail.com', 'fabrikam-labs.io', 'brand-new-shop.io', 'adventure-works.net']
const FREE = ['gmail.com', 'outlook.com', 'yahoo.com', 'icloud.com']
const FIRST = ['anna', 'liam', 'maria', 'noah', 'sofia', 'lucas', 'emma', 'mateo', 'olivia', 'leon', 'mia', 'hugo', 'ella', 'arjun', 'yuki', 'chen']
const LAST = ['schmidt', 'garcia', 'nguyen', 'kowalski', 'rossi', 'dubois', 'smith', 'tanaka', 'silva', 'jensen', 'okafor', 'novak', 'berg', 'costa']
const UK_IP = '81.2.69.142'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const LABELS = {
  bare: 'bare h3 POST (baseline)',
  pgStored: 'PostgreSQL: stored answer', pgUncached: 'PostgreSQL: stored, no cache', pgLive: 'PostgreSQL: live check',
  embStored: 'embedded: stored answer', embUncached: 'embedded: stored, no cache', embLive: 'embedded: live check',
} as const

const dns = await startFakeDns(Object.fromEntries(['gmail.com', ...CORPORATE].map((d, i) => [d, { A: [`198.51.100.${i + 1}`] }])))
const rdap = await startFakeServer((request) => {
  const name = request.path.replace('/domain/', '')
  const ageDays = name === 'brand-new-shop.io' ? 6 : 4000
  return { status: 200, body: { objectClassName: 'domain', ldhName: name, events: [{ eventAction: 'registration', eventDate: new Date(Date.now() - ageDays * 86_400_000).toISOString() }] } }
})
const identified = Array.from({ length: IDENTIFIED }, (_, i) => personEmail(i, i % 3 === 0 ? CORPORATE : FREE))
const ROWS = new Set((process.env.BENCH_ROWS ?? 'bare,postgres,embedded').split(','))
const loadAtStart = loadAverage()
const results: Figures[] = []
try {
  if (ROWS.has('bare')) results.push(await benchBare())
  if (ROWS.has('postgres')) {
    const database = await freshPostgres()
    if (database) await benchDcgate([LABELS.pgStored, LABELS.pgUncached, LABELS.pgLive], database.url).finally(database.drop)
    else console.log(`PostgreSQL at ${PG_URL} unreachable: its rows are skipped`)
  }
  if (ROWS.has('embedded')) await benchDcgate([LABELS.embStored, LABELS.embUncached, LABELS.embLive], undefined)
  print(results)
  if (results.some((r) => r.total === 0 || r.non2xx > 0 || r.errors > 0)) {
    console.log('BENCHMARK FAILED: a row answered non-2xx or errors')
    process.exitCode = 1
  }
}
finally {
  await dns.close()
  await rdap.close()
}

async function benchBare(): Promise<Figures> {
  const answer = JSON.stringify(sampleAnswer())
  const bare = await startBareH3('/api/v1/services/email/check', `async (event) => { const body = await readBody(event); if (!body || !body.email) { event.res.status = 400; return { message: 'email: is required' } } return JSON.parse(${JSON.stringify(answer)}) }`)
  return measure(LABELS.bare, bare.child, checks(bare.url, 'none', () => identified[Math.floor(Math.random() * IDENTIFIED)]!)).finally(() => stopProcess(bare.child))
}

/**
 * Identify IDENTIFIED people through /collect + /identify, then measure: stored answers (answer cache on, the
 * default), live checks, and, after a restart on the same database with `answerCacheSeconds: 0`, stored answers
 * that each cost the database query.
 */
async function benchDcgate([storedLabel, uncachedLabel, liveLabel]: readonly string[], databaseUrl: string | undefined): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-bench-'))
  let dcgate = await startDcgate(dir, databaseUrl, 10)
  try {
    const key = await createKey(dcgate.url, readFileSync(join(dcgate.dataDir, 'admin-token'), 'utf8').trim())
    const seeded = Date.now()
    // Identifications are scored offline: one private check per corporate domain first caches its RDAP and MX
    // answers, so the identified people's assessments are complete and a stored answer stays a pure read.
    for (const domain of CORPORATE) await check(dcgate.url, key, `warm-up@${domain}`)
    await seed(dcgate.url)
    if (process.env.BENCH_DEVICE_INDEX && databaseUrl) await withPg(databaseUrl, 'create index if not exists identified_users_site_device_bench on identified_users (site_id, device_hash)')
    const probe = await check(dcgate.url, key, identified[1]!)
    if (probe.emailInfo.answered_from !== 'stored' || !probe.userInfo?.deviceFingerprint || !probe.ipInfo) throw new Error(`seeding failed: ${JSON.stringify(probe)}`)
    console.log(`${storedLabel}: ${IDENTIFIED} people identified with devices and visits in ${((Date.now() - seeded) / 1000).toFixed(1)} s; e.g. ${identified[1]} → related ${JSON.stringify(probe.userInfo.related_emails)}, ip ${probe.ipInfo.country}`)
    const url = `${dcgate.url}/api/v1/services/email/check`
    results.push(await measure(storedLabel!, dcgate.child, checks(url, key, () => identified[Math.floor(Math.random() * IDENTIFIED)]!)))
    let n = 0
    const fresh = () => personEmail(IDENTIFIED + n++, n % 2 ? CORPORATE : FREE)
    const live = await check(dcgate.url, key, fresh())
    if (live.emailInfo.answered_from !== 'live') throw new Error(`expected a live check: ${JSON.stringify(live)}`)
    results.push(await measure(liveLabel!, dcgate.child, checks(url, key, fresh)))
    await dcgate.stop()
    dcgate = await startDcgate(dir, databaseUrl, 0)
    results.push(await measure(uncachedLabel!, dcgate.child, checks(`${dcgate.url}/api/v1/services/email/check`, key, () => identified[Math.floor(Math.random() * IDENTIFIED)]!)))
  }
  finally {
    await dcgate.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Every second person shares a device with the one before; each visit comes from a UK address. */
async function seed(url: string): Promise<void> {
  const post = (path: string, body: object) => fetch(`${url}${path}?cop_key=${COP_KEY}`, {
    method: 'POST', headers: { 'content-type': 'text/plain', 'x-forwarded-for': UK_IP, 'user-agent': CHROME }, body: JSON.stringify(body),
  }).then(async (response) => {
    if (response.status !== 202) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
  })
  for (let start = 0; start < IDENTIFIED; start += 20) {
    await Promise.all(identified.slice(start, start + 20).map(async (email, offset) => {
      const i = start + offset
      const hash = (Math.floor(i / 2) + 1).toString(16).padStart(64, '0')
      const visit = { v: 1, sid: `bench-session-${i}`, vid: `bench-visitor-${Math.floor(i / 2)}`, consent: 'granted' }
      await post('/collect', { ...visit, hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/signup' }], device: { hash, short: hash.slice(0, 12), confidence: 0.9, version: 1 } })
      await post('/identify', { ...visit, email, via: 'sdk', device: { hash, short: hash.slice(0, 12), confidence: 0.9, version: 1 } })
    }))
  }
  await new Promise((resolve) => setTimeout(resolve, 1500)) // the capture writer's flush
}

/** BENCH_DEVICE_INDEX=1 (PostgreSQL rows): the index on identified_users (site_id, device_hash) proposed for core, made before measuring. */
async function withPg(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(text)
    await client.query('analyze identified_users')
  }
  finally {
    await client.end()
  }
}

function checks(url: string, key: string, nextEmail: () => string): Load {
  return { url, headers: { 'content-type': 'application/json', 'x-dc-key': key }, next: () => ({ body: JSON.stringify({ email: nextEmail() }) }) }
}

interface Answer { emailInfo: { answered_from: string }, userInfo: { related_emails: string[], deviceFingerprint: unknown } | null, ipInfo: { country: string } | null }
async function check(url: string, key: string, email: string): Promise<Answer> {
  const response = await fetch(`${url}/api/v1/services/email/check`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify({ email }) })
  if (response.status !== 200) throw new Error(`check answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { data: Answer }).data
}

function personEmail(i: number, domains: readonly string[]): string {
  return `${FIRST[i % FIRST.length]}.${LAST[Math.floor(i / FIRST.length) % LAST.length]}${Math.floor(i / (FIRST.length * LAST.length)) || ''}@${domains[i % domains.length]}`
}

/** `dcgate start` with a config module that imports the email-risk plugin to point RDAP and DNS at the fakes. */
async function startDcgate(dir: string, databaseUrl: string | undefined, answerCacheSeconds: number): Promise<Dcgate> {
  const port = 3400 + Math.floor(Math.random() * 500)
  const configFile = join(dir, 'dcgate.config.mjs')
  const plugin = pathToFileURL(join(ROOT, 'plugins/email-risk/index.ts')).href
  writeFileSync(configFile, `import { createEmailRiskPlugin } from '${plugin}'
export default {
  server: { trustProxy: true },
  capture: { flushIntervalMs: 200 },
  plugins: ['capture', createEmailRiskPlugin({ rdapUrl: '${rdap.url}', dnsServers: ['${dns.server}'], timeoutMs: 2000, answerCacheSeconds: ${answerCacheSeconds} })],
  sites: [{ id: 'shop', name: 'Shop', plan: 'business', copKey: '${COP_KEY}', consent: { banner: 'off' } }],
}
`)
  const { DATABASE_URL: _inherited, ...inherited } = process.env
  const env = { ...inherited, PORT: String(port), DCGATE_DATA_DIR: join(dir, 'data'), DCGATE_LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(process.execPath, [...profile, 'bin/dcgate.mjs', 'start', '--config', configFile], { cwd: ROOT, env, stdio: 'ignore' })
  const dcgate: Dcgate = { url: `http://127.0.0.1:${port}`, child, dataDir: join(dir, 'data'), stop: () => stopProcess(child), remove: () => {} }
  try {
    await waitFor(`${dcgate.url}/openapi.json`)
  }
  catch (error) {
    await dcgate.stop()
    throw error
  }
  return dcgate
}

async function createKey(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/admin/api/sites/shop/keys`, { method: 'POST', headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })
  return ((await response.json()) as { key: string }).key
}

/** What the bare route answers: a stored answer's size and shape. */
function sampleAnswer(): object {
  return {
    success: true,
    data: {
      emailInfo: {
        normalized_email: 'anna.schmidt@gmail.com', domain: 'gmail.com', action: 'ALLOW', risk_score: 0, risk_label: 'low',
        reasons: ['gmail.com is a free email provider'], tags: ['free_provider'], suggestion: null,
        fraud_signals: { disposable_domain: false, identity_flags: { gibberish_username: false, bulk_pattern: false, plus_addressing: false, free_provider: true }, domain_maturity: { age_days: null, registered_at: null, young_domain: false }, mail_server: 'mx' },
        digital_footprint: { likely_real_person: true }, checked_at: new Date().toISOString(), answered_from: 'stored',
      },
      userInfo: { related_emails: ['liam.schmidt@gmail.com'], related_email_count: 1, deviceFingerprint: { hash: '0'.repeat(64), short: '000000000000', confidence: 0.9, version: 1 }, source: 'client_sdk', first_seen_at: new Date().toISOString() },
      ipInfo: { ip: UK_IP, country: 'GB', city: null, isp: 'Andrews & Arnold Ltd', organization: 'Andrews & Arnold Ltd', asn: 20712, is_vpn: false, is_proxy: false, is_tor: false, is_hosting: false, seen_at: new Date().toISOString() },
    },
  }
}

function print(rows: Figures[]): void {
  console.log(`\nemail-check benchmark: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per row, keep-alive`)
  console.log(`  stored: one of ${IDENTIFIED} identified emails per request (device, related email, UK visit), with the answer cache (default 10 s) and without it (a database query each);`)
  console.log('  live: a new address per request (half corporate domains: RDAP + MX via fakes, cached per domain; half free providers), saved as a server_sdk identified user')
  console.log(`servers run in their own process; autocannon and the RDAP/DNS fakes share this one; ${availableParallelism()}-core machine`)
  console.log(`load average at the start: ${loadAtStart}, at the end: ${loadAverage()}`)
  printTable(rows, 'req')
  printRssSamples(rows)
  const bare = rows.find((r) => r.label === LABELS.bare)
  for (const row of rows) {
    if (row === bare) continue
    const ratio = bare ? row.perSecond / bare.perSecond : NaN
    const stored = row.label.includes('stored')
    const verdict = stored ? `   target p99 < ${TARGET.p99Ms} ms and ratio >= ${TARGET.ratio}: ${row.p99 < TARGET.p99Ms && ratio >= TARGET.ratio ? 'PASS' : 'BELOW TARGET'}` : '   (no target)'
    console.log(`${row.label.padEnd(28)} ratio to bare ${Number.isNaN(ratio) ? '-' : ratio.toFixed(3)}   p99 ${row.p99.toFixed(1)} ms${verdict}`)
  }
}

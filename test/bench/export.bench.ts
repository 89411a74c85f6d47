// Paging the sessions export over 1,000,000 sessions of one site among several sites, on real PostgreSQL:
// the time to page through all of them at limit 500 (records/s; target >= 50,000/s), and the p99 of a page at the
// start against one at the end (target: the last within 1.5x of the first). Prints figures; exits 0 either way.
// Run: npm run bench:export (needs PostgreSQL at BENCH_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres;
// skipped with a note when unreachable). BENCH_SESSIONS=200000 for a quicker run; BENCH_SAMPLES (default 300)
// requests of each of the first and the last page.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { PG_URL, freshPostgres, loadAverage, startDcgate } from './support.ts'
import { sessionsList } from '../../plugins/export/lists/sessions.ts'

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 1_000_000)
const OTHER_SITES = ['north', 'south', 'east'] as const
const OTHERS_EACH = Math.round(SESSIONS / 4)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300)
const LIMIT = 500
const SITE = 'bench'

const database = await freshPostgres()
if (!database) {
  console.log(`PostgreSQL at ${PG_URL} unreachable: the export benchmark is skipped`)
  process.exit(0)
}
const dcgate = await startDcgate({ plugins: ['export'], sites: [{ id: SITE, name: 'Bench' }, ...OTHER_SITES.map((id) => ({ id, name: id }))] }, database.url)
const db = new pg.Client({ connectionString: database.url })
try {
  await db.connect()
  const key = await createKey(dcgate.url, readFileSync(join(dcgate.dataDir, 'admin-token'), 'utf8').trim())
  await seed(db)
  const walk = await pageThroughAll(`${dcgate.url}/api/v1/export/sessions`, key)
  const [first, last] = await firstAgainstLast(`${dcgate.url}/api/v1/export/sessions`, key, walk.lastSince)
  const plan = await explainLastPage(db, walk.lastSince)
  report(walk, first!, last!, plan)
}
finally {
  await db.end().catch(() => {})
  await dcgate.stop()
  dcgate.remove()
  await database.drop()
}

/**
 * 1,000,000 visits of the measured site over ~81 days, two at every instant (ties at every page boundary) plus a
 * run of 5,000 at one instant; the other sites' visits interleave in time. One statement per site, generate_series.
 */
async function seed(client: pg.Client): Promise<void> {
  const started = performance.now()
  const insert = (site: string, count: number, offsetMs: number) => client.query(`insert into visits (id, site_id, session_id, visitor_id, started_at, ended_at,
      duration_ms, page_count, event_count, ip_address, user_agent, country, city, isp, organization, is_vpn, is_proxy, is_tor, platform,
      browser, os, is_bot, bot_reasons, referrer, landing_url, consent)
    select gen_random_uuid(), $1::text, $1::text || '-' || n, md5(n::text), t, t + (n % 600) * interval '1 second', (n % 600) * 1000, 1 + n % 7, n % 3,
      '198.51.' || (n % 250) || '.' || (n % 200), 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      (array['DE','FR','US','GB','NL'])[1 + n % 5], 'City ' || (n % 97), 'ISP ' || (n % 31), 'Org ' || (n % 29), n % 20 = 0, n % 50 = 0, n % 500 = 0,
      'desktop', 'Chrome', 'Windows', n % 33 = 0, case when n % 33 = 0 then '["ua_bot"]'::jsonb else '[]'::jsonb end,
      'https://www.google.com/', 'https://shop.example.com/p/' || (n % 1000), 'granted'
    from generate_series(1, $2::int) n,
      lateral (select case when n <= 5000 then timestamptz '2026-01-01T00:00:00Z'
        else timestamptz '2026-01-01T00:00:00Z' + (n / 2) * interval '7 seconds' + $3::int * interval '1 millisecond' end as t) s`, [site, count, offsetMs])
  await insert(SITE, SESSIONS, 0)
  for (const [i, site] of OTHER_SITES.entries()) await insert(site, OTHERS_EACH, 1000 * (i + 1))
  await client.query('vacuum analyze visits')
  // Write the bulk load's dirty pages out now, not while the walk is measured (needs superuser; skipped otherwise).
  await client.query('checkpoint').catch(() => {})
  const [{ n }] = (await client.query<{ n: string }>('select count(*) as n from visits')).rows as [{ n: string }]
  console.log(`seeded ${n} visits (${SESSIONS} of site "${SITE}", ${OTHERS_EACH} each of ${OTHER_SITES.join(', ')}) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

interface Walk { records: number, unique: number, pages: number, seconds: number, pageMs: number[], lastSince: string }

/** Every page of the site in turn at limit 500, following next_since, one request at a time (as a BI job would). */
async function pageThroughAll(url: string, key: string): Promise<Walk> {
  // Session ids are `bench-<n>`, n from 1: one byte per session marks it seen (no Set of a million strings growing
  // in this process while it measures); records − unique is the number of repeats.
  const seen = new Uint8Array(SESSIONS + 1)
  let unique = 0
  const pageMs: number[] = []
  let records = 0
  let since: string | undefined
  const started = performance.now()
  for (;;) {
    const t0 = performance.now()
    const body = await getPage(url, key, since)
    pageMs.push(performance.now() - t0)
    records += body.data.length
    for (const r of body.data) {
      const n = Number(r.session_id.slice(SITE.length + 1))
      if (!seen[n]) unique++
      seen[n] = 1
    }
    if (!body.pagination.has_more) break
    since = body.pagination.next_since!
  }
  // `since` is now the last page's: the one compared with the first below.
  return { records, unique, pages: pageMs.length, seconds: (performance.now() - started) / 1000, pageMs, lastSince: since ?? '' }
}

/** The first page and the last page, requested alternately SAMPLES times each: their latency percentiles. */
async function firstAgainstLast(url: string, key: string, lastSince: string): Promise<[number[], number[]]> {
  const first: number[] = []
  const last: number[] = []
  for (let i = 0; i < 20; i++) await Promise.all([getPage(url, key, undefined), getPage(url, key, lastSince)])
  for (let i = 0; i < SAMPLES; i++) {
    for (const [since, into] of (i % 2 ? [[lastSince, last], [undefined, first]] : [[undefined, first], [lastSince, last]]) as [string | undefined, number[]][]) {
      const t0 = performance.now()
      await getPage(url, key, since)
      into.push(performance.now() - t0)
    }
  }
  return [first, last]
}

async function getPage(url: string, key: string, since: string | undefined): Promise<{ data: { session_id: string }[], pagination: { has_more: boolean, next_since: string | null } }> {
  const response = await fetch(`${url}?limit=${LIMIT}${since ? `&since=${encodeURIComponent(since)}` : ''}`, { headers: { 'x-dc-key': key } })
  if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`)
  return await response.json() as never
}

/** The plan of the last page's statement as dcgate runs it: one index range scan of this site's rows. */
async function explainLastPage(client: pg.Client, since: string): Promise<string> {
  const { parseInstant, tieToUuid, toSqlTime } = await import('../../plugins/export/paging/instant.ts')
  const position = parseInstant(since)!
  const statement = sessionsList(async () => position).statement
  const result = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off) ${statement.text}`, [SITE, toSqlTime(position), tieToUuid(position.tie), '2100-01-01T00:00:00Z', tieToUuid(0n), LIMIT + 1])
  return result.rows.map((r) => `  ${r['QUERY PLAN']}`).join('\n')
}

function report(walk: Walk, first: number[], last: number[], plan: string): void {
  const perSecond = walk.records / walk.seconds
  const [f50, f99] = percentiles(first, 0.5, 0.99)
  const [l50, l99] = percentiles(last, 0.5, 0.99)
  const tenth = Math.max(1, Math.floor(walk.pageMs.length / 10))
  const [, walkFirst99] = percentiles(walk.pageMs.slice(0, tenth), 0.5, 0.99)
  const [, walkLast99] = percentiles(walk.pageMs.slice(-tenth), 0.5, 0.99)
  console.log(`\nexport benchmark: GET /api/v1/export/sessions?limit=${LIMIT}, one request at a time over HTTP keep-alive; dcgate (dcgate start) in its own process; PostgreSQL ${PG_URL.replace(/\/\/[^@]*@/, '//')}`)
  console.log(`load average at the end: ${loadAverage()}`)
  console.log(`walk: ${walk.records} records in ${walk.pages} pages, ${walk.unique} distinct (expected ${SESSIONS}), ${walk.seconds.toFixed(1)} s = ${Math.round(perSecond)} records/s   target >= 50000: ${perSecond >= 50_000 ? 'PASS' : 'BELOW TARGET'}`)
  console.log(`walk page latency: p99 of the first tenth ${walkFirst99!.toFixed(2)} ms, of the last tenth ${walkLast99!.toFixed(2)} ms`)
  console.log(`first page: p50 ${f50!.toFixed(2)} ms, p99 ${f99!.toFixed(2)} ms   last page: p50 ${l50!.toFixed(2)} ms, p99 ${l99!.toFixed(2)} ms   (${SAMPLES} requests each, alternating)`)
  console.log(`last/first p99 = ${(l99! / f99!).toFixed(2)}   target <= 1.5: ${l99! <= 1.5 * f99! ? 'PASS' : 'BELOW TARGET'}`)
  console.log(`plan of the last page's statement:\n${plan}`)
}

/** Nearest-rank-below percentiles (sorts a copy). */
function percentiles(samples: number[], ...ps: number[]): number[] {
  const sorted = [...samples].sort((a, b) => a - b)
  return ps.map((p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0)
}

async function createKey(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/admin/api/sites/${SITE}/keys`, { method: 'POST', headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })
  return ((await response.json()) as { key: string }).key
}

/**
 * The dashboard's Deliveries page with 100,000 conversions stored on the embedded database (PGlite): how long a page
 * of 50 deliveries takes over HTTP, signed in as the operator, against a bare h3 route answering the same HTML bytes
 * in the same run (target: p95 under 100 ms). Prints figures; exits 0 either way, 1 when a request fails.
 *
 *   npm run bench:dashboard                       (BENCH_SAMPLES=200 requests per page and server)
 *   BENCH_CONVERSIONS=20000 npm run bench:dashboard
 *
 * dcgate runs in this process as `dcgate start` boots it (startServer), with the embedded database persisted in a
 * temporary dataDir; the seed is one statement (generate_series) run on dcgate's own connection, as PGlite has one.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { H3, serve } from 'h3'
import { resolveConfig } from '../../core/config/load.ts'
import { startServer, type RunningServer } from '../../core/server.ts'
import { adapters } from '../../adapters/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'

const CONVERSIONS = Number(process.env.BENCH_CONVERSIONS ?? 100_000)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)
const WARMUP = 20
const TARGET_MS = 100
const SITE = 'bench'

const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-bench-dashboard-'))
let running: RunningServer | undefined
try {
  running = await startServer(resolveConfig({
    dataDir, server: { port: 0, host: '127.0.0.1' }, sites: [{ id: SITE, name: 'Bench shop' }],
  }, {}, builtInPlugins), { banner: false, logger: createConsola({ level: -999 }), builtInPlugins, adapters })
  await seed(running)
  const cookie = await signIn(running.url, running.dcgate.adminToken)
  const base = `${running.url}/dashboard/sites/${SITE}/deliveries`
  const deep = await cursorAfter(base, cookie, 20)
  const pages: [string, string][] = [
    ['newest 50', base],
    ['failed, one platform', `${base}?status=failed&platform=google_ads`],
    ['one event, one day', `${base}?event=Lead&from=${daysAgo(3)}&to=${daysAgo(3)}`],
    ['21st page (Older x20)', `${base}?before=${deep}`],
    // The worst case: nothing matches, so the walk reads every delivery of the site before it answers an empty page.
    ['a filter nothing matches', `${base}?status=failed&platform=meta`],
  ]
  console.log(`\ndashboard benchmark: GET the Deliveries page (50 rows) over HTTP keep-alive, one request at a time, signed in as the operator`)
  console.log(`embedded PGlite, ${CONVERSIONS} conversions with one delivery each; ${SAMPLES} requests per page and server, alternating; load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`)
  console.log(`${'page'.padEnd(24)} ${'bytes'.padStart(7)}  ${'bare p50'.padStart(9)} ${'bare p95'.padStart(9)}  ${'dcgate p50'.padStart(10)} ${'dcgate p95'.padStart(10)}  target p95 < ${TARGET_MS} ms`)
  for (const [label, url] of pages) {
    const html = await fetchOk(url, cookie, label.startsWith('a filter nothing'))
    const bare = await startBare(html)
    const { dcgate, baseline } = await measure(url, cookie, bare.url)
    await bare.server.close(true)
    const [d50, d95] = percentiles(dcgate, 0.5, 0.95)
    const [b50, b95] = percentiles(baseline, 0.5, 0.95)
    console.log(`${label.padEnd(24)} ${String(html.length).padStart(7)}  ${ms(b50!)} ${ms(b95!)}  ${ms(d50!, 10)} ${ms(d95!, 10)}  ${d95! < TARGET_MS ? 'PASS' : 'BELOW TARGET'}`)
  }
}
catch (error) {
  console.error('BENCHMARK FAILED:', error instanceof Error ? error.message : error)
  process.exitCode = 1
}
finally {
  await running?.stop()
  rmSync(dataDir, { recursive: true, force: true })
}

/** One statement: CONVERSIONS conversions over the last ~23 days, each with one delivery (9 in 10 sent, the rest failed or skipped). */
async function seed(server: RunningServer): Promise<void> {
  const started = performance.now()
  const sql = (text: string, params: unknown[] = []) => server.dcgate.database.orm.em.getConnection().execute(text, params)
  await sql(`with c as (
      insert into conversions (id, site_id, message_id, order_id, source, event, occurred_at, channel, confirmation, state, identity, click_ids, created_at)
      select gen_random_uuid(), ?, 'order-' || n, 'order-' || n, 'automation', (array['Purchase', 'Lead', 'AddToCart'])[1 + n % 3], t, 'web', 'confirmed',
        'accepted', jsonb_build_object('email', md5(n::text) || md5(n::text)), case when n % 2 = 0 then jsonb_build_object('gclid', 'gclid-' || n) else '{}'::jsonb end, t
      from generate_series(1, ?::int) n, lateral (select now() - (? - n) * interval '20 seconds' as t) s
      returning id, created_at, (substr(message_id, 7))::int as n
    )
    insert into deliveries (id, conversion_id, site_id, provider, status, attempts, http_status, error, created_at, updated_at, sent_at)
    select gen_random_uuid(), c.id, ?, (array['meta', 'google_ads'])[1 + c.n % 2],
      case when c.n % 10 = 3 then 'failed' when c.n % 10 = 7 then 'skipped' else 'sent' end, 1,
      case when c.n % 10 = 7 then null when c.n % 10 = 3 then 400 else 200 end,
      case when c.n % 10 = 3 then 'Invalid parameter' when c.n % 10 = 7 then 'the matched visit was ruled a bot' end,
      c.created_at, c.created_at, case when c.n % 10 not in (3, 7) then c.created_at end
    from c`, [SITE, CONVERSIONS, CONVERSIONS, SITE])
  await sql('analyze conversions')
  await sql('analyze deliveries')
  console.log(`seeded ${CONVERSIONS} conversions and deliveries in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

/** Signs in with the admin token as a browser would (the form's CSRF cookie, then the session cookie). */
async function signIn(url: string, token: string): Promise<string> {
  const front = await fetch(`${url}/dashboard`)
  const formCookie = front.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const csrf = /name="csrf" value="([^"]+)"/.exec(await front.text())?.[1] ?? ''
  const answer = await fetch(`${url}/dashboard/sign-in`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({ token, csrf }).toString(),
  })
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`)
  return answer.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
}

async function fetchOk(url: string, cookie: string, empty = false): Promise<string> {
  const response = await fetch(url, { headers: { cookie }, redirect: 'manual' })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
  if (!empty && (text.match(/<tr>/g) ?? []).length < 2) throw new Error(`${url} shows no rows`)
  return text
}

/** The `before` position after following "Older" this many times. */
async function cursorAfter(base: string, cookie: string, times: number): Promise<string> {
  let cursor = ''
  for (let i = 0; i < times; i++) {
    const text = await fetchOk(cursor ? `${base}?before=${cursor}` : base, cookie)
    cursor = /\?before=([^"&]+)">Older</.exec(text)?.[1] ?? ''
    if (!cursor) throw new Error(`no Older link on page ${i + 1}`)
  }
  return cursor
}

async function startBare(html: string) {
  const app = new H3()
  app.get('/page', () => new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } }))
  const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
  await server.ready()
  const address = server.node?.server?.address()
  if (!address || typeof address !== 'object') throw new Error('the bare h3 server has no port')
  return { server, url: `http://127.0.0.1:${address.port}/page` }
}

/** Warm-up, then SAMPLES requests to each server, alternating: the latency of each in ms. */
async function measure(url: string, cookie: string, bareUrl: string): Promise<{ dcgate: number[], baseline: number[] }> {
  const timed = async (target: string) => {
    const t0 = performance.now()
    const response = await fetch(target, { headers: { cookie } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${target} answered ${response.status}`)
    return performance.now() - t0
  }
  for (let i = 0; i < WARMUP; i++) await Promise.all([timed(url), timed(bareUrl)])
  const dcgate: number[] = []
  const baseline: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    baseline.push(await timed(bareUrl))
    dcgate.push(await timed(url))
  }
  return { dcgate, baseline }
}

function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10)
}

function ms(value: number, width = 9): string {
  return `${value.toFixed(2)} ms`.padStart(width)
}

/** Nearest-rank percentiles (sorts a copy). */
function percentiles(samples: number[], ...ps: number[]): number[] {
  const sorted = [...samples].sort((a, b) => a - b)
  return ps.map((p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? 0)
}

// What the benches that run dcgate as `dcgate start` in a process of its own share (conversions.bench.ts,
// collect.bench.ts): the servers, a fresh PostgreSQL database, the measured load, process figures and the table.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import autocannon, { type Result } from 'autocannon'

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
export const WARMUP_SECONDS = 3
export const CONNECTIONS = 20
export const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
export const ROOT = new URL('../../', import.meta.url).pathname
/** Latencies kept per measured run; beyond this the percentiles come from the first ones. */
const MAX_LATENCY_SAMPLES = 2_000_000
const RSS_SAMPLE_MS = 5000

export interface Figures {
  label: string, perSecond: number, p50: number, p99: number, rssStartMb: number, rssEndMb: number, rssSamples: number[], non2xx: number, errors: number, total: number
  /**
   * CPU ms per 2xx response: the server process, and the local postgres processes: the background ones (WAL writer,
   * checkpointer…) and the backends of the load's database (every backend when it names none).
   */
  serverCpuMs: number, postgresCpuMs: number
  /** CPU ms per 2xx response of this process: autocannon plus whatever else the bench runs beside it. */
  benchCpuMs: number
  /**
   * What limits the row, over the measured run: the server's CPU time as a share of one core (its JavaScript runs on
   * one thread, so near 1 the server is the limit) and the busy share of the whole machine (/proc/stat, every process).
   */
  serverCoreShare: number, machineBusyShare: number
  /** Counted responses (see Load.counts) of the warm-up and the measured run together: what the server acknowledged. */
  answered: number
  /** Other 2xx answers of both runs by status (a 207 where a 202 is counted): printed apart, in no figure above. */
  apart: Record<string, number>
  /** Requests sent in either run that got no response before the load stopped: the server may still have handled them. */
  unanswered: number
}

/** The measured requests: one URL, fixed headers, and per request a body (and headers added to the fixed ones). */
export interface Load {
  url: string
  headers: Record<string, string>
  next: () => { body: string, headers?: Record<string, string> }
  /** The status a success answers (202 for a conversion): only it is counted; other 2xx go to Figures.apart. Default: any 2xx. */
  counts?: number
  /** The PostgreSQL database the server writes to: only its backends (and the background processes) count as PostgreSQL's CPU. */
  database?: string
}

export interface Dcgate {
  /** http://127.0.0.1:<port> */
  url: string
  child: ChildProcess
  /** The server's dataDir (admin-token, the embedded database under db/). */
  dataDir: string
  /** SIGTERM (a graceful shutdown), waits for the process to exit; keeps the temp dir. */
  stop: () => Promise<void>
  /** Removes the temp dir (config and dataDir); after stop. */
  remove: () => void
}

/**
 * Starts `dcgate start` in a process of its own, with `config` written to a config file in a temp dir and the
 * dataDir beside it; on `databaseUrl`, or the embedded PGlite without one. BENCH_CPU_PROF=<dir> writes a V8 CPU
 * profile of the server there when it exits, for finding hot spots.
 */
export async function startDcgate(config: object, databaseUrl: string | undefined): Promise<Dcgate> {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-bench-'))
  const port = 3400 + Math.floor(Math.random() * 500)
  const configFile = join(dir, 'dcgate.config.mjs')
  writeFileSync(configFile, `export default ${JSON.stringify(config, null, 2)}\n`)
  const { DATABASE_URL: _inherited, ...inherited } = process.env
  const env = { ...inherited, PORT: String(port), DCGATE_DATA_DIR: join(dir, 'data'), DCGATE_LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(process.execPath, [...profile, 'bin/dcgate.mjs', 'start', '--config', configFile], { cwd: ROOT, env, stdio: 'ignore' })
  const dcgate: Dcgate = {
    url: `http://127.0.0.1:${port}`,
    child,
    dataDir: join(dir, 'data'),
    stop: () => stopProcess(child),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
  try {
    await waitFor(`${dcgate.url}/openapi.json`)
  }
  catch (error) {
    await dcgate.stop()
    dcgate.remove()
    throw error
  }
  return dcgate
}

/**
 * A bare h3 app in its own process, served like dcgate (h3's serve, srvx on node:http), with one POST route;
 * BENCH_CPU_PROF profiles it too, to set its functions beside dcgate's.
 */
export async function startBareH3(path: string, handlerSource: string): Promise<{ url: string, child: ChildProcess }> {
  const port = 3900 + Math.floor(Math.random() * 90)
  const source = `import { H3, serve, readBody } from 'h3'
const app = new H3()
app.post('${path}', ${handlerSource})
serve(app, { port: ${port}, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })${process.env.BENCH_CPU_PROF ? `
process.on('SIGTERM', () => process.exit(0)) // a normal exit writes the profile` : ''}`
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []
  const child = spawn(process.execPath, [...profile, '--input-type=module', '-e', source], { cwd: ROOT, stdio: 'ignore' })
  await waitFor(`http://127.0.0.1:${port}${path}`, 'POST')
  return { url: `http://127.0.0.1:${port}${path}`, child }
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const closed = new Promise((resolve) => child.once('close', resolve))
  child.kill('SIGTERM')
  await closed
}

/** A new database on the machine's PostgreSQL (PG_URL), or null when it is unreachable; `drop` removes it. */
export async function freshPostgres(): Promise<{ url: string, drop: () => Promise<void> } | null> {
  const name = `dcgate_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_URL })
  try {
    await admin.connect()
    await admin.query(`create database ${name}`)
    // Each row starts from a clean checkpoint, so it does not pay for the WAL an earlier row wrote (measured: the
    // eight-platform row after the two-platform one spent twice the PostgreSQL CPU per conversion without it).
    await admin.query('checkpoint').catch(() => {})
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

export async function waitFor(url: string, method = 'GET'): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(url, { method, body: method === 'POST' ? '{}' : undefined, headers: { 'content-type': 'application/json' } })
      return
    }
    catch {
      await sleep(100)
    }
  }
  throw new Error(`${url} did not answer`)
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Warm-up (discarded), then `seconds` (default SECONDS) measured with CONNECTIONS keep-alive connections: 2xx per
 * second, latency percentiles of every response, the server's RSS before, after and every 5 s, and CPU per 2xx response.
 */
export async function measure(label: string, server: ChildProcess, load: Load, seconds = SECONDS): Promise<Figures> {
  const pid = server.pid!
  const warmup = await runLoad(load, WARMUP_SECONDS, null)
  const rssStartMb = rss(pid)
  const cpu = startCpuMeter(pid, load.database)
  const latencies: number[] = []
  const rssSampler = sampleRss(pid)
  const result = await runLoad(load, seconds, latencies).finally(rssSampler.stop)
  const rssEndMb = rss(pid)
  const counted = (run: Result) => (load.counts ? run.statusCodeStats[load.counts]?.count ?? 0 : run['2xx'])
  const perResponse = cpu.perResponse(Math.max(1, counted(result)))
  const [p50, p99] = percentiles(latencies, 0.5, 0.99)
  return {
    label, perSecond: counted(result) / result.duration, p50: p50!, p99: p99!, rssStartMb, rssEndMb, rssSamples: rssSampler.samples,
    non2xx: result.non2xx, errors: result.errors + result.timeouts, total: counted(result), ...perResponse,
    answered: counted(warmup) + counted(result), apart: otherSuccesses([warmup, result], load.counts), unanswered: unanswered(warmup) + unanswered(result),
  }
}

/** 2xx answers by status other than the counted one, over the runs. */
function otherSuccesses(runs: Result[], counts: number | undefined): Record<string, number> {
  const apart: Record<string, number> = {}
  if (counts === undefined) return apart
  for (const run of runs) {
    for (const [status, { count }] of Object.entries(run.statusCodeStats ?? {})) {
      if (status.startsWith('2') && Number(status) !== counts && count > 0) apart[status] = (apart[status] ?? 0) + count
    }
  }
  return apart
}

/** One autocannon run; `latencies` (when given) receives the time of each response, in ms. */
function runLoad(load: Load, seconds: number, latencies: number[] | null): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    const instance = autocannon({
      url: load.url, connections: CONNECTIONS, duration: seconds, timeout: 10,
      requests: [{ method: 'POST', headers: load.headers, setupRequest: (request) => withNext(request, load.next()) }],
    }, (error, result) => (error ? reject(error) : resolve(result)))
    if (latencies) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => void (latencies.length < MAX_LATENCY_SAMPLES && latencies.push(ms)))
  })
}

function withNext<R extends { body?: string, headers?: Record<string, string> }>(request: R, next: ReturnType<Load['next']>): R {
  return next.headers ? { ...request, body: next.body, headers: { ...request.headers, ...next.headers } } : { ...request, body: next.body }
}

function unanswered(result: Result): number {
  return Math.max(0, result.requests.sent - result['2xx'] - result.non2xx)
}

/** Nearest-rank-below percentiles of the samples (sorts them in place). */
function percentiles(samples: number[], ...ps: number[]): number[] {
  samples.sort((a, b) => a - b)
  return ps.map((p) => samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? 0)
}

/**
 * CPU time from now on of the server, the local postgres processes (see postgresCpuMs) and this process, per response;
 * and the server's and the machine's busy shares over the same time.
 */
function startCpuMeter(pid: number, database: string | undefined) {
  const before = { server: cpuMs(pid), postgres: postgresCpuMs(database), bench: process.cpuUsage(), machine: machineTicks(), at: performance.now() }
  return {
    perResponse(responses: number): Pick<Figures, 'serverCpuMs' | 'postgresCpuMs' | 'benchCpuMs' | 'serverCoreShare' | 'machineBusyShare'> {
      const server = cpuMs(pid) - before.server
      const postgres = cpuSince(before.postgres, postgresCpuMs(database)) / responses
      const bench = process.cpuUsage(before.bench)
      const machine = machineTicks()
      const ticks = machine.total - before.machine.total
      return {
        serverCpuMs: server / responses, postgresCpuMs: postgres, benchCpuMs: (bench.user + bench.system) / 1000 / responses,
        serverCoreShare: server / (performance.now() - before.at), machineBusyShare: ticks > 0 ? (machine.busy - before.machine.busy) / ticks : 0,
      }
    },
  }
}

/** Clock ticks of every CPU so far (/proc/stat's first line): all of them, and those not idle nor waiting for I/O. */
function machineTicks(): { total: number, busy: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
  const total = ticks.reduce((sum, n) => sum + n, 0)
  return { total, busy: total - ticks[3]! - ticks[4]! }
}

/** RSS every 5 s until stopped, to tell a plateau from a leak. */
function sampleRss(pid: number): { samples: number[], stop: () => void } {
  const samples: number[] = []
  const timer = setInterval(() => samples.push(rss(pid)), RSS_SAMPLE_MS)
  return { samples, stop: () => clearInterval(timer) }
}

/** Resident memory of a process, in MB. */
export function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:')) ?? 'VmRSS: 0 kB'
  return Math.round(Number(line.replace(/\D+/g, '')) / 1024)
}

/** User + system CPU time of a process so far, in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  }
  catch {
    return 0
  }
}

/**
 * CPU ms so far of each local postgres process (none when PostgreSQL is elsewhere), keyed by pid and start time: the
 * background processes, and the backends of `database` only when given. On a machine shared with other work, other
 * databases' backends are not this bench's cost, and a sum over every process went negative when one exited.
 */
export function postgresCpuMs(database?: string): Map<string, number> {
  const processes = new Map<string, number>()
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue
      // A backend's title is `postgres: <cluster>: <user> <database> <client> <state>`; a background process names its role.
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').split(': ').slice(2).join(': ')
      const backend = / \S+\(\d+\)|\[local\]/.test(title)
      if (database && backend && title.split(' ')[1] !== database) continue
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      processes.set(`${pid}:${stat[19]}`, cpuMs(Number(pid)))
    }
    catch { /* exited meanwhile */ }
  }
  return processes
}

/** CPU ms the processes spent since `before`: a new one counts whole, one that exited meanwhile is missed (not subtracted). */
export function cpuSince(before: ReadonlyMap<string, number>, now: ReadonlyMap<string, number>): number {
  let total = 0
  for (const [key, ms] of now) total += ms - (before.get(key) ?? 0)
  return total
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
}

/** The rows as a table; `unit` names what one response is ('conv', 'req'): the rate is `<unit>/s`, CPU ms per unit. */
export function printTable(rows: Figures[], unit: string): void {
  console.log(`${'row'.padEnd(28)} ${`${unit}/s`.padStart(6)}   p50 ms   p99 ms   RSS start→end MB   2xx      non2xx  errors   ${`server cpu ms/${unit}`.padStart(18)}   ${`postgres cpu ms/${unit}`.padStart(20)}   ${`bench cpu ms/${unit}`.padStart(17)}   server core %   machine busy %`)
  for (const r of rows) {
    const busy = `${(100 * r.serverCoreShare).toFixed(0).padStart(13)}   ${(100 * r.machineBusyShare).toFixed(0).padStart(14)}`
    const cpu = `${r.serverCpuMs.toFixed(3).padStart(18)}   ${r.label.includes('PostgreSQL') ? r.postgresCpuMs.toFixed(3).padStart(20) : '                   -'}   ${r.benchCpuMs.toFixed(3).padStart(17)}   ${busy}`
    console.log(`${r.label.padEnd(28)} ${r.perSecond.toFixed(0).padStart(6)}   ${r.p50.toFixed(1).padStart(6)}   ${r.p99.toFixed(1).padStart(6)}   ${`${r.rssStartMb}→${r.rssEndMb}`.padStart(16)}   ${String(r.total).padEnd(8)} ${String(r.non2xx).padEnd(7)} ${r.errors.toString().padEnd(7)}  ${cpu}`)
  }
  for (const r of rows) {
    const apart = Object.entries(r.apart).map(([status, count]) => `${count} answered ${status}`)
    if (apart.length) console.log(`${r.label}: not counted above (warm-up included): ${apart.join(', ')}`)
  }
}

export function printRssSamples(rows: Figures[]): void {
  for (const r of rows) console.log(`RSS every 5 s, ${r.label}: ${r.rssSamples.join(' ')} MB`)
}

/** A new Purchase: its own messageId, email, gclid and fbclid from `id`. */
export function purchaseBody(id: string): string {
  return JSON.stringify({
    event: 'Purchase', messageId: id, properties: { value: 42.5, currency: 'USD', order_id: id },
    context: { traits: { email: `buyer-${id}@example.com`, phone: '+1 212 555 0142' }, identifiers: { gclid: `Cj0-${id}`, fbclid: `IwAR-${id}` }, ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (bench)' },
  })
}

/** A private key of the site `shop`, made with the admin token. */
export async function createKey(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/admin/api/sites/shop/keys`, { method: 'POST', headers: { 'authorization': `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) })
  return ((await response.json()) as { key: string }).key
}

/**
 * The server's garbage collections and V8 mode so far, from its GET /metrics (loopback needs no token): major and
 * minor collections with their total pause, and whether the memory saver mode is on (core/memory-mode.ts).
 */
export async function gcSummary(url: string): Promise<string> {
  const text = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.text()).catch(() => '')
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN)
  const kind = (name: string) => `${name} ${value(new RegExp(`gc_duration_seconds_count\\{kind="${name}"\\} (\\S+)`))} (${value(new RegExp(`gc_duration_seconds_sum\\{kind="${name}"\\} (\\S+)`)).toFixed(2)} s)`
  return `GCs since start: ${kind('major')}, ${kind('minor')}; memory saver mode now: ${value(/^dcgate_memory_saver_mode (\S+)/m) === 1 ? 'on' : 'off'}`
}

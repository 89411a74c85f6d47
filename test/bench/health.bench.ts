/**
 * Throughput of dcgate's cheapest authenticated route against a bare h3 app answering the same JSON.
 *
 *   npm run bench                      (BENCH_SECONDS=10 by default)
 *   BENCH_SECONDS=30 npm run bench
 *
 * Both servers and autocannon share this one process (one JS thread), so the absolute req/s are lower than
 * a separate load generator would see; the ratio dcgate/bare is the figure to watch. See test/bench/README.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon, { type Result } from 'autocannon'
import { createConsola } from 'consola'
import { H3, serve } from 'h3'
import { resolveConfig } from '../../core/config/load.ts'
import { startServer, type RunningServer } from '../../core/server.ts'
import { adapters } from '../../adapters/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'

const CONNECTIONS = 10
const WARMUP_SECONDS = 2
const ROUNDS = 3
const TARGET_RATIO = 0.7
/** Latency samples kept per run: a uniform reservoir beyond this, so memory stays at 2 MiB whatever the duration. */
const RESERVOIR_SIZE = 1 << 18
const HEALTH_BODY = { success: true, app_id: 'demo', identified_user_count: 0 } as const

interface Target {
  name: 'bare' | 'dcgate'
  url: string
  headers: Record<string, string>
}

interface RunStats {
  rps: number
  p50: number
  p99: number
  /** Process CPU time (user + system, client and servers together) per measured response, in µs. */
  cpuUs: number
  requests: number
}

/** Algorithm R reservoir over one preallocated buffer, reused run after run. */
class LatencyReservoir {
  private readonly values = new Float64Array(RESERVOIR_SIZE)
  private seen = 0

  reset(): void {
    this.seen = 0
  }

  add(ms: number): void {
    if (this.seen < RESERVOIR_SIZE) this.values[this.seen] = ms
    else {
      const slot = Math.floor(Math.random() * (this.seen + 1))
      if (slot < RESERVOIR_SIZE) this.values[slot] = ms
    }
    this.seen++
  }

  /** Nearest-rank percentiles, in ms. Sorts the buffer in place: call once, at the end of a run. */
  percentiles(...ps: number[]): number[] {
    const n = Math.min(this.seen, RESERVOIR_SIZE)
    if (n === 0) return ps.map(() => Number.NaN)
    const sorted = this.values.subarray(0, n).sort()
    return ps.map((p) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!)
  }
}

class BenchFailure extends Error {}

const seconds = parseSeconds(process.env.BENCH_SECONDS)
const latencies = new LatencyReservoir()

function parseSeconds(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 10
  const value = Number(raw)
  if (Number.isInteger(value) && value >= 1) return value
  console.error(`BENCHMARK FAILED: BENCH_SECONDS must be a whole number of seconds >= 1, got "${raw}"`)
  process.exit(1)
}

/** One autocannon run. With a reservoir, records every response time and checks every response was a 200. */
function cannon(target: Target, duration: number, record?: LatencyReservoir): Promise<{ result: Result, non200: number }> {
  let non200 = 0
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: target.url, headers: target.headers, connections: CONNECTIONS, duration, timeout: 10 },
      (error, result) => (error ? reject(error) : resolve({ result, non200 })),
    )
    if (record) {
      record.reset()
      instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
        record.add(ms)
        if (status !== 200) non200++
      })
    }
  })
}

async function measure(target: Target): Promise<RunStats> {
  await cannon(target, WARMUP_SECONDS)
  const cpuBefore = process.cpuUsage()
  const { result, non200 } = await cannon(target, seconds, latencies)
  const cpu = process.cpuUsage(cpuBefore)
  const codes = Object.keys(result.statusCodeStats)
  const problems = [
    result.errors && `${result.errors} errors (${result.timeouts} timeouts)`,
    result.non2xx && `${result.non2xx} non-2xx responses`,
    non200 && `${non200} responses other than 200`,
    codes.some((code) => code !== '200') && `status codes seen: ${codes.join(', ')}`,
    result['2xx'] === 0 && 'no successful response at all',
  ].filter(Boolean)
  if (problems.length) throw new BenchFailure(`${target.name} (${target.url}): ${problems.join('; ')}`)
  const [p50, p99] = latencies.percentiles(50, 99)
  return { rps: result['2xx'] / result.duration, p50: p50!, p99: p99!, cpuUs: (cpu.user + cpu.system) / result['2xx'], requests: result['2xx'] }
}

/** Boots dcgate as `dcgate start` does (embedded PGlite persisted under dataDir, memory storage), on a free port. */
async function startDcgate(dataDir: string): Promise<{ running: RunningServer, key: string }> {
  const config = resolveConfig({
    dataDir,
    server: { port: 0, host: '127.0.0.1' },
    sites: [{ id: 'demo', name: 'Demo shop' }],
  }, {}, builtInPlugins)
  const running = await startServer(config, { banner: false, logger: createConsola({ level: -999 }), builtInPlugins, adapters })
  const created = await fetch(`${running.url}/admin/api/sites/demo/keys`, {
    method: 'POST',
    headers: { 'authorization': `Bearer ${running.dcgate.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  })
  if (created.status !== 201) throw new BenchFailure(`creating a key failed: ${created.status} ${await created.text()}`)
  const { key } = await created.json() as { key: string }
  return { running, key }
}

async function startBare() {
  const app = new H3()
  app.get('/health', () => ({ success: true, app_id: 'demo', identified_user_count: 0 }))
  const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
  await server.ready()
  const address = server.node?.server?.address()
  if (!address || typeof address !== 'object') throw new BenchFailure('the bare h3 server has no port')
  return { server, url: `http://127.0.0.1:${address.port}/health` }
}

/** One request by hand: warms dcgate's key cache and proves both answer the same 200 body before measuring. */
async function checkOnce(target: Target): Promise<void> {
  const response = await fetch(target.url, { headers: target.headers })
  const body = await response.json() as unknown
  if (response.status !== 200 || JSON.stringify(body) !== JSON.stringify(HEALTH_BODY)) {
    throw new BenchFailure(`${target.name}: expected 200 ${JSON.stringify(HEALTH_BODY)}, got ${response.status} ${JSON.stringify(body)}`)
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function version(pkg: string): string {
  const url = new URL(`../../node_modules/${pkg}/package.json`, import.meta.url)
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version
}

function printHeader(): void {
  const cores = availableParallelism()
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU'
  const load = loadavg()[0]!
  console.log('dcgate health benchmark: GET /api/v1/export/health (x-dc-key, key cache warm) vs bare h3 GET /health')
  console.log(`node ${process.version}, h3 ${version('h3')}, autocannon ${version('autocannon')}, ${cores} cores (${cpu})`)
  console.log(`NOTE: autocannon runs in this same process (one JS thread) as both servers on a ${cores}-core machine;`)
  console.log('      absolute req/s are lower than with a separate load generator. Compare the ratio.')
  console.log(`${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up (discarded) + ${seconds} s measured per run, ${ROUNDS} rounds alternating bare/dcgate`)
  console.log(`load average before start: ${load.toFixed(2)}${load > cores * 0.75 ? `  WARNING: other work is running on this ${cores}-core machine; req/s will be noisy (the CPU µs/req column is steadier)` : ''}`)
  console.log('')
}

function printTable(bare: RunStats[], dcgate: RunStats[]): void {
  const num = (n: number, width: number, digits = 0) => n.toFixed(digits).padStart(width)
  const cells = (s: RunStats) => `${num(s.rps, 8)} ${num(s.p50, 7, 3)} ${num(s.p99, 7, 3)} ${num(s.cpuUs, 7, 1)}`
  const heads = `${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'cpu µs'.padStart(7)}`
  console.log(`${''.padEnd(7)} ${'bare h3'.padEnd(31)}  ${'dcgate'.padEnd(31)}`)
  console.log(`${'round'.padEnd(7)} ${heads}  ${heads}  ratio`)
  for (let i = 0; i < bare.length; i++) {
    console.log(`${String(i + 1).padEnd(7)} ${cells(bare[i]!)}  ${cells(dcgate[i]!)}  ${num(dcgate[i]!.rps / bare[i]!.rps, 5, 3)}`)
  }
  const med = (list: RunStats[]): RunStats => ({
    rps: median(list.map((s) => s.rps)),
    p50: median(list.map((s) => s.p50)),
    p99: median(list.map((s) => s.p99)),
    cpuUs: median(list.map((s) => s.cpuUs)),
    requests: median(list.map((s) => s.requests)),
  })
  const mb = med(bare)
  const md = med(dcgate)
  const ratio = md.rps / mb.rps
  console.log(`${'median'.padEnd(7)} ${cells(mb)}  ${cells(md)}  ${num(ratio, 5, 3)}`)
  console.log('')
  console.log(`all ${bare.concat(dcgate).reduce((n, s) => n + s.requests, 0)} measured responses were 200`)
  console.log('latency: per-response times from autocannon\'s \'response\' event (sub-ms); cpu µs: process CPU per response, client included;')
  console.log('the median row takes the median of each column; its ratio is median dcgate req/s / median bare req/s')
  console.log(`CPU cost ratio bare/dcgate (median cpu µs per response) = ${(mb.cpuUs / md.cpuUs).toFixed(3)}`)
  console.log(`ratio dcgate/bare (median req/s) = ${ratio.toFixed(3)}   target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'PASS' : 'BELOW TARGET'}`)
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-bench-'))
  let dcgate: RunningServer | undefined
  let bare: Awaited<ReturnType<typeof startBare>> | undefined
  try {
    printHeader()
    const started = await startDcgate(dataDir)
    dcgate = started.running
    bare = await startBare()
    const targets: Record<Target['name'], Target> = {
      bare: { name: 'bare', url: bare.url, headers: {} },
      dcgate: { name: 'dcgate', url: `${dcgate.url}/api/v1/export/health`, headers: { 'x-dc-key': started.key } },
    }
    await checkOnce(targets.dcgate)
    await checkOnce(targets.bare)

    const results: Record<Target['name'], RunStats[]> = { bare: [], dcgate: [] }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of [targets.bare, targets.dcgate]) {
        const stats = await measure(target)
        results[target.name].push(stats)
        console.log(`  round ${round} ${target.name.padEnd(6)} ${stats.rps.toFixed(0).padStart(7)} req/s  p50 ${stats.p50.toFixed(3)} ms  p99 ${stats.p99.toFixed(3)} ms  ${stats.cpuUs.toFixed(1)} cpu µs/req`)
      }
    }
    console.log('')
    printTable(results.bare, results.dcgate)
    return 0
  }
  catch (error) {
    console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? error.message : String(error)}`)
    if (!(error instanceof BenchFailure) && error instanceof Error) console.error(error.stack)
    return 1
  }
  finally {
    await bare?.server.close(true).catch((error: unknown) => console.error('closing the bare server failed', error))
    await dcgate?.stop().catch((error: unknown) => console.error('stopping dcgate failed', error))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const code = await main()
process.exitCode = code
// Everything is closed; a handle some library leaves behind must not keep the process (or CI) waiting.
setTimeout(() => process.exit(code), 2000).unref()

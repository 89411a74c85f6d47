/**
 * Start time: from spawning `node bin/dcgate.mjs start` to the first `/readyz` 200 (issue 26: ≤ 1.5 s on PostgreSQL,
 * ≤ 3 s embedded, on an existing data dir). The shipped config (every built-in plugin), as `npm start` runs it.
 *
 *   npm run bench:start                    # 5 restarts per database
 *   BENCH_ROUNDS=10 npm run bench:start
 *
 * The first start of each database applies the migrations and is printed apart; then the same data dir (and
 * database) is started BENCH_ROUNDS times. A bare `node:http` server's start to its first answer is the floor.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freshPostgres, ROOT, sleep, stopProcess } from './support.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TARGETS_MS = { embedded: 3000, postgres: 1500 } as const

/**
 * CPU time (user + system) the process has used so far, in ms, from /proc (Linux; 0 elsewhere). On a machine busy
 * with other work the wall time to ready grows with the load; the CPU time the start needs does not, nearly.
 */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10 // utime, stime: clock ticks of 10 ms
  }
  catch {
    return 0
  }
}

/** Spawns `command`, polls `url` every 10 ms until it answers 200; the ms in between, the CPU ms, and the running child. */
async function timeToReady(args: string[], env: NodeJS.ProcessEnv, url: string): Promise<{ ms: number, cpu: number, child: ChildProcess }> {
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: 'ignore' })
  while (performance.now() - started < 120_000) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with code ${child.exitCode}`)
    const ok = await fetch(url).then((response) => response.status === 200, () => false)
    if (ok) return { ms: performance.now() - started, cpu: cpuMs(child.pid), child }
    await sleep(10)
  }
  child.kill('SIGKILL')
  throw new Error(`${url} did not answer 200 within 120 s`)
}

function dcgateEnv(port: number, dataDir: string, databaseUrl?: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _db, REDIS_URL: _redis, DCGATE_CONFIG: _config, ...inherited } = process.env
  return { ...inherited, PORT: String(port), HOST: '127.0.0.1', DCGATE_DATA_DIR: dataDir, DCGATE_LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }
}

interface Starts { first: number, restarts: number[], cpu: number[] }

async function measureDcgate(label: keyof typeof TARGETS_MS, databaseUrl?: string): Promise<Starts> {
  const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-bench-start-'))
  const port = 3400 + Math.floor(Math.random() * 500)
  const args = ['bin/dcgate.mjs', 'start']
  const url = `http://127.0.0.1:${port}/readyz`
  try {
    const first = await timeToReady(args, dcgateEnv(port, dataDir, databaseUrl), url)
    await stopProcess(first.child)
    const restarts: number[] = []
    const cpu: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const run = await timeToReady(args, dcgateEnv(port, dataDir, databaseUrl), url)
      restarts.push(run.ms)
      cpu.push(run.cpu)
      await stopProcess(run.child)
      console.error(`  ${label} restart ${round + 1}: ${Math.round(run.ms)} ms (CPU ${run.cpu} ms)`)
    }
    return { first: first.ms, restarts, cpu }
  }
  finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function measureBare(): Promise<Starts> {
  const port = 3900 + Math.floor(Math.random() * 90)
  const source = `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`
  const bare: Starts = { first: Number.NaN, restarts: [], cpu: [] }
  for (let round = 0; round < ROUNDS; round++) {
    const run = await timeToReady(['-e', source], process.env, `http://127.0.0.1:${port}/`)
    bare.restarts.push(run.ms)
    bare.cpu.push(run.cpu)
    await stopProcess(run.child)
  }
  return bare
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (value: number) => `${(value / 1000).toFixed(2)} s`

console.log(`start to /readyz 200, Node.js ${process.version}, ${ROUNDS} restarts each on an existing data dir\n`)
console.log(`load average at the start: ${loadavg().map((load) => load.toFixed(1)).join(' ')} on ${availableParallelism()} cores\n`)
const rows: string[][] = [['server', 'first start (migrations)', 'restart min', 'median', 'max', 'CPU median', 'target', 'verdict']]
rows.push(row('bare node:http', await measureBare()))
const embedded = await measureDcgate('embedded')
rows.push(row('dcgate embedded (PGlite)', embedded, TARGETS_MS.embedded))
const database = await freshPostgres()
if (database) {
  try {
    rows.push(row('dcgate on PostgreSQL', await measureDcgate('postgres', database.url), TARGETS_MS.postgres))
  }
  finally {
    await database.drop()
  }
}
else rows.push(['dcgate on PostgreSQL', 'skipped: no PostgreSQL at BENCH_DATABASE_URL', '', '', '', '', '', ''])

function row(label: string, figures: Starts, target?: number): string[] {
  const mid = median(figures.restarts)
  const verdict = target === undefined ? '' : mid <= target ? 'met (median)' : 'missed (median)'
  return [label, Number.isNaN(figures.first) ? '' : ms(figures.first), ms(Math.min(...figures.restarts)), ms(mid), ms(Math.max(...figures.restarts)), ms(median(figures.cpu)), target === undefined ? '' : `≤ ${ms(target)}`, verdict]
}

const widths = rows[0]!.map((_, column) => Math.max(...rows.map((r) => r[column]!.length)))
for (const r of rows) console.log(r.map((cell, column) => cell.padEnd(widths[column]!)).join('  '))

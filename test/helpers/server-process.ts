import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { freshDatabase, type TestDatabase } from './database.ts'

/** The repository root: the child's cwd, as when an operator runs `npx dcgate` there. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const BIN = join(REPO_ROOT, 'bin/dcgate.mjs')
/** What a config file outside the repo imports defineConfig/definePlugin from (the child strips its types as Node does for every .ts file outside node_modules). */
export const CORE_INDEX_URL = pathToFileURL(join(REPO_ROOT, 'core/index.ts')).href

/** A line of a Node stack trace (`    at fn (file:1:2)`); users must never see one. */
export const STACK_LINE = /^\s+at /m

export interface RunResult {
  /** Exit code; null when the process was killed by a signal (e.g. after a timeout). */
  code: number | null
  stdout: string
  stderr: string
}

type EnvOverrides = Record<string, string | undefined>

const live = new Set<ChildProcess>()

/** Kills every child this helper spawned that is still running (afterAll; also on process exit). */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL')
  live.clear()
}
process.once('exit', killAllChildren)

/** A TCP port nothing listens on right now (probed on every interface, as dcgate listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** A fresh directory under the OS temp dir. */
export function tempDir(prefix = 'dcgate-cli-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/**
 * The parent's environment without anything that would steer dcgate (DCGATE_*, PORT, DATABASE_URL:
 * a developer's shell must not change what the tests see), plus `overrides`; undefined removes a key.
 * REDIS_URL passes through as is.
 */
export function childEnv(overrides: EnvOverrides = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('DCGATE_') || key === 'PORT' || key === 'DATABASE_URL') continue
    env[key] = value
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[key]
    else env[key] = value
  }
  return env
}

/** Runs a command to its end (killing it after `timeoutMs`) and collects its output. */
export function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    live.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const timer = setTimeout(() => {
      stderr += `\n[test helper: killed after ${timeoutMs} ms]`
      child.kill('SIGKILL')
    }, timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      live.delete(child)
      reject(error)
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      live.delete(child)
      resolve({ code, stdout, stderr })
    })
  })
}

/** `node bin/dcgate.mjs ...args` from the repo root. */
export function runDcgate(args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<RunResult> {
  return runCommand(process.execPath, [BIN, ...args], env, timeoutMs)
}

/** A plain-object .mjs config: the demo site and the export plugin. */
export function demoConfig(port = 3000): string {
  return `export default { server: { port: ${port} }, plugins: ['export'], sites: [{ id: 'demo', name: 'Demo' }] }\n`
}

export interface ServerProcessOptions {
  /** Source of the config file; default demoConfig(). */
  config?: string
  /** Its file name in the temp dir; default dcgate.config.mjs. */
  fileName?: string
  /** More files to write into the temp dir first (e.g. a package.json), by relative path. */
  files?: Record<string, string>
  /** Hand the file over as `start --config F` (default) or as DCGATE_CONFIG. */
  configVia?: 'flag' | 'env'
  /** Extra environment for the server and the CLI; undefined removes a variable. */
  env?: EnvOverrides
  /** The port to listen on, when the config must name it beforehand (server.baseUrl); default a free one. */
  port?: number
}

interface Prepared {
  dir: string
  dataDir: string
  port: number
  configFile: string
  env: NodeJS.ProcessEnv
  startArgs: string[]
  database: TestDatabase
  cleanup: () => Promise<void>
}

/**
 * A temp dir with the config file, a free port and a database of its own: a fresh PostgreSQL
 * database when DATABASE_URL is set, else the embedded one under <dir>/data.
 */
async function prepare(options: ServerProcessOptions): Promise<Prepared> {
  const dir = tempDir()
  const dataDir = join(dir, 'data')
  const port = options.port ?? await freePort()
  const database = await freshDatabase()
  for (const [name, source] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), source)
  }
  const configFile = join(dir, options.fileName ?? 'dcgate.config.mjs')
  writeFileSync(configFile, options.config ?? demoConfig())
  const via = options.configVia ?? 'flag'
  const env = childEnv({
    PORT: String(port),
    DCGATE_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    ...(via === 'env' ? { DCGATE_CONFIG: configFile } : {}),
    ...options.env,
  })
  return {
    dir, dataDir, port, configFile, env, database,
    startArgs: via === 'flag' ? ['start', '--config', configFile] : ['start'],
    cleanup: async () => {
      await database.drop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * `dcgate start` on a config that should not boot: waits for the process to exit (killing it after
 * `timeoutMs` if it listens instead) and cleans up its temp dir and database. `args` replaces the
 * default `start --config <file>`.
 */
export async function runStart(
  options: ServerProcessOptions & { args?: (configFile: string) => string[], timeoutMs?: number },
): Promise<RunResult & { configFile: string }> {
  const prepared = await prepare(options)
  try {
    const args = options.args?.(prepared.configFile) ?? prepared.startArgs
    const result = await runDcgate(args, prepared.env, options.timeoutMs ?? 60_000)
    return { ...result, configFile: prepared.configFile }
  }
  finally {
    await prepared.cleanup()
  }
}

export interface ServerProcess {
  /** http://127.0.0.1:<port> */
  url: string
  port: number
  /** The temp dir holding the config file and the data dir. */
  dir: string
  dataDir: string
  configFile: string
  /** Environment of the server and of cli(). */
  env: NodeJS.ProcessEnv
  /** The current server process. */
  readonly child: ChildProcess
  /** Output of the current server process so far. */
  readonly stdout: string
  readonly stderr: string
  /** `node bin/dcgate.mjs ...args` with the server's environment (port, data dir, database); `env` adds to it. */
  cli: (args: string[], env?: EnvOverrides) => Promise<RunResult>
  /** Resolves once the server's output matches `pattern`. */
  waitForOutput: (pattern: RegExp, timeoutMs?: number) => Promise<void>
  /** Sends `signal` and resolves the exit code (null: killed by a signal). */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
  /** Starts the server again on the same port, config, data dir and database; stop it first. */
  restart: () => Promise<void>
  /** Kills the server if it still runs, then drops its database and removes its temp dir. */
  close: () => Promise<void>
}

interface Run {
  child: ChildProcess
  stdout: string
  stderr: string
  exited: Promise<number | null>
}

/** Spawns `dcgate start` as a child process and waits until GET /openapi.json answers (up to 60 s). */
export async function startServerProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const prepared = await prepare(options)
  const url = `http://127.0.0.1:${prepared.port}`
  let run: Run | undefined

  const spawnServer = async () => {
    const child = spawn(process.execPath, [BIN, ...prepared.startArgs], { cwd: REPO_ROOT, env: prepared.env, stdio: ['ignore', 'pipe', 'pipe'] })
    live.add(child)
    const current: Run = {
      child, stdout: '', stderr: '',
      exited: new Promise((resolve) => child.once('close', (code) => {
        live.delete(child)
        resolve(code)
      })),
    }
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { current.stdout += chunk })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { current.stderr += chunk })
    run = current
    await waitUntilReady(url, current)
  }

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (!run) return null
    const current = run
    if (current.child.exitCode === null && current.child.signalCode === null) current.child.kill(signal)
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), 30_000) })
    const outcome = await Promise.race([current.exited, timeout]).finally(() => clearTimeout(timer))
    if (outcome === 'timeout') {
      current.child.kill('SIGKILL')
      throw new Error(`dcgate did not exit within 30 s of ${signal}\n${current.stdout}\n${current.stderr}`)
    }
    return outcome
  }

  try {
    await spawnServer()
  }
  catch (error) {
    run?.child.kill('SIGKILL')
    await run?.exited
    await prepared.cleanup()
    throw error
  }

  return {
    url,
    port: prepared.port,
    dir: prepared.dir,
    dataDir: prepared.dataDir,
    configFile: prepared.configFile,
    env: prepared.env,
    get child() { return run!.child },
    get stdout() { return run!.stdout },
    get stderr() { return run!.stderr },
    cli: (args, env = {}) => {
      const merged: NodeJS.ProcessEnv = { ...prepared.env }
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete merged[key]
        else merged[key] = value
      }
      return runDcgate(args, merged)
    },
    async waitForOutput(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (!pattern.test(run!.stdout + run!.stderr)) {
        if (Date.now() > deadline) throw new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${run!.stdout}\n${run!.stderr}`)
        await sleep(20)
      }
    },
    stop,
    async restart() {
      if (run && run.child.exitCode === null && run.child.signalCode === null) throw new Error('restart(): stop the server first')
      await spawnServer()
    },
    async close() {
      if (run) {
        run.child.kill('SIGKILL')
        await run.exited
      }
      await prepared.cleanup()
    },
  }
}

const READY_WITHIN_MS = 120_000

async function waitUntilReady(url: string, run: Run): Promise<void> {
  let exited = false
  void run.exited.then(() => { exited = true })
  // A cold start is a few seconds; several starting at once beside the suite's other worker on two cores take far longer.
  const deadline = Date.now() + READY_WITHIN_MS
  while (Date.now() < deadline) {
    if (exited) throw new Error(`dcgate exited with code ${run.child.exitCode} before answering:\n${run.stdout}\n${run.stderr}`)
    try {
      const response = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      // The banner too: the answer must come from this child, not from whatever else took the port.
      if (response.ok && run.stdout.includes('dcgate listening on')) return
    }
    catch {
      // not listening yet
    }
    await sleep(100)
  }
  throw new Error(`dcgate did not answer ${url}/openapi.json within ${READY_WITHIN_MS / 1000} s:\n${run.stdout}\n${run.stderr}`)
}

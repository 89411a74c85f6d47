import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { childEnv, freePort, REPO_ROOT, runDcgate, sleep, type RunResult } from '../helpers/server-process.ts'

/** One dcgate process of the cluster, started as `npm start` starts it: `node bin/dcgate.mjs start`. */
export interface Instance {
  name: string
  /** http://127.0.0.1:<port>, straight to this instance (Caddy's upstream address). */
  url: string
  port: number
  /** Its own data dir: admin token file, capture journal. */
  dataDir: string
  readonly output: string
  /** `dcgate ...args` against this instance (its port, data dir and the shared config). */
  cli: (args: string[]) => Promise<RunResult>
  /** Sends `signal` and waits for the exit. */
  stop: (signal?: NodeJS.Signals) => Promise<void>
  /** Starts it again on the same port, data dir and config, and waits until it is ready. */
  restart: () => Promise<void>
}

export interface InstanceOptions {
  name: string
  /** Parent directory; the instance gets `<root>/<name>/data`. */
  root: string
  configFile: string
  /** DATABASE_URL, REDIS_URL, DCGATE_ADMIN_TOKEN: what every instance shares. */
  env: Record<string, string>
}

const READY_WITHIN_MS = 180_000
const running = new Set<ChildProcess>()

/** SIGKILLs every instance still running (afterAll, and on a failure half-way through beforeAll). */
export function killInstances(): void {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
}
process.once('exit', killInstances)

export async function startInstance(options: InstanceOptions): Promise<Instance> {
  const dataDir = join(options.root, options.name, 'data')
  mkdirSync(dataDir, { recursive: true })
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = childEnv({ ...options.env, PORT: String(port), DCGATE_DATA_DIR: dataDir, DCGATE_CONFIG: options.configFile })
  let child: ChildProcess
  let output = ''
  let exited: Promise<void>

  const spawnIt = async () => {
    output = ''
    child = spawn(process.execPath, ['bin/dcgate.mjs', 'start'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    running.add(child)
    const current = child
    exited = new Promise((resolve) => current.once('close', () => {
      running.delete(current)
      resolve()
    }))
    current.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    current.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    await waitUntilReady(url, current, () => output)
  }
  await spawnIt()

  return {
    name: options.name, url, port, dataDir,
    get output() { return output },
    cli: (args) => runDcgate(args, env),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
    async restart() {
      if (child.exitCode === null && child.signalCode === null) throw new Error(`${options.name} still runs: stop it first`)
      await spawnIt()
    },
  }
}

/**
 * Ready when GET /readyz answers 200 (once that probe exists; until then a 404 there falls back to /openapi.json)
 * and the banner is out, so the answer comes from this child and not from whatever else took the port.
 */
async function waitUntilReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`dcgate at ${url} exited before it was ready:\n${output()}`)
    if (output().includes('dcgate listening on') && await answersReady(url)) return
    await sleep(200)
  }
  throw new Error(`dcgate at ${url} was not ready within ${READY_WITHIN_MS / 1000} s:\n${output()}`)
}

async function answersReady(url: string): Promise<boolean> {
  try {
    const probe = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) })
    await probe.arrayBuffer()
    if (probe.status !== 404) return probe.ok
    const fallback = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(3000) })
    await fallback.arrayBuffer()
    return fallback.ok
  }
  catch {
    return false
  }
}

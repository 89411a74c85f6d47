import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'
import { REPO_ROOT, sleep } from '../helpers/server-process.ts'

/** The Caddyfile the deployment guide shows for several instances; the cluster test runs it as it is. */
export const CLUSTER_CADDYFILE = join(REPO_ROOT, 'docs/deployment/Caddyfile.cluster')
export const CADDY = '/usr/bin/caddy'

/** A database created for this run on the PostgreSQL of `adminUrl`, dropped (with its connections) at the end. */
export async function createClusterDatabase(adminUrl: string): Promise<{ url: string, query: <T>(text: string, params?: unknown[]) => Promise<T[]>, drop: () => Promise<void> }> {
  const name = `dcgate_cluster_${randomBytes(6).toString('hex')}`
  await withClient(adminUrl, (c) => c.query(`create database ${name}`))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    query: (text, params = []) => withClient(url.toString(), async (c) => (await c.query(text, params)).rows),
    drop: () => withClient(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    return await fn(client)
  }
  finally {
    await client.end()
  }
}

/**
 * A Redis logical database of its own for this run (dcgate's keys all start with `dcgate:`, so two runs on one
 * database would share key verdicts and first-party states): the first empty one of 1-15, in random order, marked
 * taken at once. Flushed at the end.
 */
export async function claimRedisDatabase(baseUrl: string): Promise<{ url: string, release: () => Promise<void> }> {
  const numbers = Array.from({ length: 15 }, (_, i) => i + 1).sort(() => Math.random() - 0.5)
  for (const db of numbers) {
    const url = new URL(baseUrl)
    url.pathname = `/${db}`
    const client = new Redis(url.toString(), { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 1 })
    await client.connect()
    // SET NX: two runs that both saw an empty database cannot both take it.
    const taken = await client.set('cluster-test:owner', String(process.pid), 'EX', 3600, 'NX')
    if (taken === 'OK' && await client.dbsize() === 1) {
      return {
        url: url.toString(),
        release: async () => {
          await client.flushdb()
          client.disconnect()
        },
      }
    }
    if (taken === 'OK') await client.del('cluster-test:owner')
    client.disconnect()
  }
  throw new Error(`No empty Redis database (1-15) on ${baseUrl} for the cluster test`)
}

export interface Caddy {
  /** http://127.0.0.1:<port>: the load balancer. */
  url: string
  /** http://127.0.0.1:<port>: the loopback site Caddy asks about on-demand certificates. */
  askUrl: string
  readonly output: string
  stop: () => Promise<void>
}

/** `caddy run --config docs/deployment/Caddyfile.cluster --adapter caddyfile` on loopback ports, in front of `upstreams`. */
export async function startCaddy(options: { upstreams: string[], ports: { http: number, https: number, lb: number, ask: number }, stateDir: string }): Promise<Caddy> {
  const { ports } = options
  mkdirSync(options.stateDir, { recursive: true })
  const child: ChildProcess = spawn(CADDY, ['run', '--config', CLUSTER_CADDYFILE, '--adapter', 'caddyfile'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      // Caddy keeps certificates and its autosave under these; a temp dir, not the user's home.
      HOME: options.stateDir, XDG_DATA_HOME: options.stateDir, XDG_CONFIG_HOME: options.stateDir,
      CADDY_ADMIN: 'off',
      CADDY_HTTP_PORT: String(ports.http),
      CADDY_HTTPS_PORT: String(ports.https),
      DCGATE_ASK_PORT: String(ports.ask),
      DCGATE_HOSTS: `http://127.0.0.1:${ports.lb}`,
      DCGATE_UPSTREAMS: options.upstreams.join(' '),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  process.once('exit', () => child.kill('SIGKILL'))
  const url = `http://127.0.0.1:${ports.lb}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`caddy exited:\n${output}`)
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) })
      await response.arrayBuffer()
      if (response.ok) break
    }
    catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`caddy did not proxy ${url} within 60 s:\n${output}`)
    }
    await sleep(200)
  }
  return {
    url,
    askUrl: `http://127.0.0.1:${ports.ask}`,
    get output() { return output },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))])
    },
  }
}

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { bootTestApp, DEMO_SITE, type TestApp } from '../helpers/app.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { definePlugin } from '../../core/plugin.ts'
import { startServer } from '../../core/server.ts'
import { onPostgres, sharedDatabase, type TestDatabase } from '../helpers/database.ts'
import { startFreezingProxy, type FreezingProxy } from '../faults/freezing-proxy.ts'

// The load balancer's view: /livez answers while the process runs; /readyz says 503 while the database does not
// answer and 200 again once it does, without a restart, and 503 from the moment the app starts closing.
let database: TestDatabase & { url: string }
let proxy: FreezingProxy
let app: TestApp

beforeAll(async () => {
  database = await sharedDatabase()
  proxy = await startFreezingProxy(database.url)
  app = await bootTestApp({ plugins: ['capture', 'intake'] }, { databaseUrl: proxy.url })
})
afterAll(async () => {
  proxy?.thaw()
  await app?.close()
  await proxy?.close()
  await database?.drop()
})

async function probe(path: string): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await app.request(path)
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** Polls until the probe answers `status` (a loaded machine may take a while); the last answer. */
async function until(path: string, status: number, deadlineMs = 30_000) {
  const deadline = Date.now() + deadlineMs
  let last = await probe(path)
  while (last.status !== status && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    last = await probe(path)
  }
  return last
}

describe(`probes (${onPostgres ? 'PostgreSQL' : 'PGlite on loopback'} behind a freezing proxy)`, () => {
  it('is ready after boot', async () => {
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ready', checks: { booted: true, database: true } } })
    expect(await probe('/livez')).toEqual({ status: 200, body: { status: 'ok' } })
  })

  it('is not ready while the database does not answer, and ready again once it does', async () => {
    proxy.freeze()
    try {
      const started = performance.now()
      const frozen = await until('/readyz', 503)
      expect(frozen).toEqual({
        status: 503,
        body: { status: 'not_ready', message: 'Not ready: the database did not answer within 2000 ms', failed: 'database', checks: { booted: true, database: false } },
      })
      // Alive all along: liveness checks nothing outside the process, and answers at once.
      const live = performance.now()
      expect((await probe('/livez')).status).toBe(200)
      expect(performance.now() - live).toBeLessThan(1000)
      expect(performance.now() - started).toBeLessThan(30_000)
    }
    finally {
      proxy.thaw()
    }
    expect((await until('/readyz', 200)).body).toEqual({ status: 'ready', checks: { booted: true, database: true } })
  })

  it('answers nothing sensitive: no version, no database address', async () => {
    const text = JSON.stringify(await probe('/readyz'))
    expect(text).not.toContain(new URL(database.url).host)
    expect(text).not.toMatch(/postgres|pglite|\d+\.\d+\.\d+/i)
  })
})

describe('readiness while closing', () => {
  it('is 503 from the moment close starts', async () => {
    const other = await bootTestApp({ plugins: ['intake'] })
    let during: { status: number, body: Record<string, unknown> } | undefined
    other.dcgate.hooks.hook('app:close', async () => {
      const response = await other.request('/readyz')
      during = { status: response.status, body: await response.json() as Record<string, unknown> }
    })
    await other.close()
    expect(during).toEqual({ status: 503, body: { status: 'not_ready', message: 'Not ready: still booting, or shutting down', failed: 'booted', checks: { booted: false, database: false } } })
  })
})

describe('readiness while a server stops', () => {
  it('is 503 while in-flight requests finish, before the app closes', async () => {
    let finish!: () => void
    const finished = new Promise<void>((resolve) => (finish = resolve))
    let arrive!: () => void
    const arrived = new Promise<void>((resolve) => (arrive = resolve))
    const slow = definePlugin({
      name: 'slow',
      setup(ctx) {
        ctx.routes.add({ method: 'GET', path: '/test/slow', auth: 'none', summary: 'Waits', handler: async () => {
          arrive()
          await finished
          return { done: true }
        } })
      },
    })
    const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-drain-'))
    const running = await startServer(resolveConfig({ sites: [DEMO_SITE], dataDir, server: { host: '127.0.0.1', port: 0 }, plugins: [slow] }, {}), {
      banner: false, inMemoryDatabase: true, embeddedTemplate: new Blob([readFileSync(inject('pgliteTemplate'))]),
      logger: createConsola({ level: -999 }), builtInPlugins: {}, adapters: [],
    })
    try {
      const inFlight = fetch(`${running.url}/test/slow`)
      await arrived
      const stopped = running.stop()
      const readyz = await running.dcgate.app.request('/readyz')
      expect(readyz.status).toBe(503)
      expect((await readyz.json() as { failed: string }).failed).toBe('booted')
      finish()
      expect((await inFlight).status).toBe(200)
      await stopped
    }
    finally {
      finish()
      await running.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

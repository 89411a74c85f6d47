import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
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

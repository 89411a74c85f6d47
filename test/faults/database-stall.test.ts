import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, health, postPurchase, type TestApp } from '../helpers/app.ts'
import { onPostgres, sharedDatabase, type TestDatabase } from '../helpers/database.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { startFreezingProxy, type FreezingProxy } from './freezing-proxy.ts'

// A database that stops answering without refusing connections (a network partition, a hung server): every
// request still gets an answer within 5 s, and once the database answers again the same app serves normally,
// without a restart, and stores what it acknowledged during the stall.
const ANSWER_WITHIN_MS = 5000
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'

let database: TestDatabase & { url: string }
let proxy: FreezingProxy
let fake: FakeServer
let app: TestApp
let key: string
let direct: pg.Client

beforeAll(async () => {
  database = await sharedDatabase()
  proxy = await startFreezingProxy(database.url)
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['capture', 'intake', 'export'],
    capture: { flushIntervalMs: 100 },
    delivery: { workerIntervalMs: 100, leaseSeconds: 2 },
    sites: [{ id: 'demo', name: 'Demo', destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { databaseUrl: proxy.url, adapters: [testPlatform], builtInPlugins })
  key = await app.createKey()
  // Beside the proxy: what is stored, read while the app's own path is frozen or not.
  direct = new pg.Client({ connectionString: database.url })
  await direct.connect()
})
afterAll(async () => {
  proxy?.thaw()
  await app?.close()
  await direct?.end()
  await proxy?.close()
  await fake?.close()
  await database?.drop()
})

const conversion = (messageId: string) => postPurchase(app, key, messageId)
const exportList = () => app.request('/api/v1/export/conversions', { headers: { 'x-dc-key': key } })
const collect = (session: string) => app.request(`/collect?cop_key=${app.dcgate.context.sites.byId('demo')!.copKey}`, {
  method: 'POST',
  headers: { 'content-type': 'text/plain', 'user-agent': CHROME },
  body: JSON.stringify({ v: 1, sid: session, vid: 'visitor-stall', consent: 'granted', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }] }),
})

/** The answer and how long it took. */
async function timed(request: () => Promise<Response>): Promise<{ status: number, body: unknown, ms: number }> {
  const started = performance.now()
  const response = await request()
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null, ms: performance.now() - started }
}

const storedConversion = async (messageId: string) => (await direct.query('select 1 from conversions where message_id = $1', [messageId])).rowCount
const storedVisit = async (session: string) => (await direct.query('select page_count from visits where session_id = $1', [session])).rows[0]?.page_count as number | undefined

describe(`a database that stops answering (${onPostgres ? 'PostgreSQL' : 'PGlite on loopback'} behind a freezing proxy)`, () => {
  it('answers fast while frozen and recovers without a restart', async () => {
    // Warm: the pool holds connections, the key is cached, and everything works.
    expect((await timed(() => conversion('before-stall'))).status).toBe(202)
    expect((await timed(exportList)).status).toBe(200)

    proxy.freeze()
    const during = await Promise.all([
      timed(() => conversion('during-stall')),
      timed(exportList),
      timed(() => health(app, key)),
      timed(() => collect('stall-session')),
    ])
    const [automation, list, healthAnswer, collected] = during
    for (const answer of [automation, list, healthAnswer]) {
      expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS)
      expect(answer.status).toBeGreaterThanOrEqual(500)
      expect(answer.body).toEqual({ message: expect.any(String) })
    }
    // The capture journal holds the hit, so it is acknowledged; or refused with 503 when it cannot be held.
    expect(collected.ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect([202, 503]).toContain(collected.status)
    // Still frozen, a second round: stuck connections were replaced, not queued behind.
    const again = await timed(() => health(app, key))
    expect(again.ms).toBeLessThan(ANSWER_WITHIN_MS)
    expect(again.status).toBeGreaterThanOrEqual(500)

    proxy.thaw()
    await expect.poll(async () => (await conversion('after-stall')).status, { timeout: 20_000, interval: 250 }).toBe(202)
    expect((await timed(exportList)).status).toBe(200)
    expect((await timed(() => health(app, key))).status).toBe(200)
    expect(await storedConversion('after-stall')).toBe(1)
    // What was acknowledged during the stall is stored: the capture writer kept running.
    if (collected.status === 202) await expect.poll(() => storedVisit('stall-session'), { timeout: 20_000, interval: 250 }).toBe(1)
    // The delivery worker kept running too: the stalled conversion, answered with an error, may or may not have been
    // stored (the statement can reach the server after the stall); if stored, it is delivered, never left behind.
    const sentFor = (messageId: string) => fake.requests.filter((r) => r.body.includes(`"${messageId}`)).length
    await expect.poll(() => sentFor('after-stall'), { timeout: 20_000, interval: 250 }).toBe(1)
    // The delivery worker kept polling through the stall (its claims failed): a row due now is sent.
    await direct.query(`insert into conversions (id, site_id, message_id, source, event, standard_event, occurred_at, channel, confirmation, state)
      values (gen_random_uuid(), 'demo', 'due-after-stall', 'automation', 'Lead', 'Lead', now(), 'online', 'tracked', 'accepted')`)
    await direct.query(`insert into deliveries (id, conversion_id, site_id, provider, status, next_attempt_at)
      select gen_random_uuid(), id, 'demo', 'testads', 'pending', now() from conversions where message_id = 'due-after-stall'`)
    await expect.poll(() => sentFor('due-after-stall'), { timeout: 20_000, interval: 250 }).toBe(1)
    if (await storedConversion('during-stall')) {
      await expect.poll(() => sentFor('during-stall'), { timeout: 20_000, interval: 250 }).toBe(1)
    }
  })
})

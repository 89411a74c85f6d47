import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'

/**
 * Issue 25: one POST /collect with 50 Purchase hits made 50 conversions, each queued to every platform. The cop_key
 * is in every page, so a request, and a visit, make a few conversions at most; a bot makes none.
 */
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const GOOGLEBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/141.0.7390.122 Safari/537.36'
let app: TestApp
let fake: FakeServer
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20, conversionsPerRequest: 3, conversionsPerVisit: 5 },
    delivery: { publicGraceSeconds: 0 },
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], destinations: { testads: { baseUrl: fake.url, token: 'good' } } }],
  }, { adapters: [testPlatform], builtInPlugins })
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

let n = 0
/** Visit ids of this run: with Redis, the per-visit counts outlive the test app, and a later run must start afresh. */
const run = randomUUID().slice(0, 8)
const visit = (name: string) => `sess-${run}-${name}`
/** One request of `count` Purchase hits, each with an id of its own, from a visit (`sid`). */
function purchases(sid: string, count: number, userAgent = CHROME) {
  const hits = Array.from({ length: count }, () => ({ t: 'event', ts: Date.now(), url: 'https://shop.example/thanks', name: 'Purchase', id: `flood-${++n}`, props: { value: 1, currency: 'EUR' } }))
  return app.request(`/collect?cop_key=${app.dcgate.context.sites.byId('shop')!.copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': userAgent, 'x-forwarded-for': '73.162.0.1', origin: 'https://shop.example' },
    body: JSON.stringify({ v: 1, sid, vid: `visitor-${sid}`, consent: 'granted', hits }),
  })
}
const conversionsOf = async (sid: string) => (await sql<{ n: number }[]>('select count(*)::int as n from conversions where session_id = ?', [sid]))[0]!.n
const deliveriesOf = async (sid: string) => (await sql<{ n: number }[]>(
  'select count(*)::int as n from deliveries d join conversions c on c.id = d.conversion_id where c.session_id = ?', [sid]))[0]!.n
const eventsOf = async (sid: string) => (await sql<{ n: number }[]>('select count(*)::int as n from page_events where session_id = ?', [sid]))[0]!.n

describe('conversions from the tracking script', () => {
  it('one request of 50 Purchase hits makes capture.conversionsPerRequest conversions; every hit is still an event', async () => {
    expect((await purchases(visit('flood-0001'), 50)).status).toBe(202)
    expect(await conversionsOf(visit('flood-0001'))).toBe(3)
    expect(await deliveriesOf(visit('flood-0001'))).toBe(3)
    await expect.poll(() => eventsOf(visit('flood-0001'))).toBe(50)
  })

  it('one visit makes capture.conversionsPerVisit conversions over its requests', async () => {
    for (let i = 0; i < 4; i++) expect((await purchases(visit('flood-0002'), 2)).status).toBe(202)
    expect(await conversionsOf(visit('flood-0002'))).toBe(5)
    // Another visit has its own count.
    expect((await purchases(visit('flood-0003'), 1)).status).toBe(202)
    expect(await conversionsOf(visit('flood-0003'))).toBe(1)
  })

  it('a bot makes no conversion, and nothing reaches a platform', async () => {
    const before = fake.requests.length
    expect((await purchases(visit('flood-bot1'), 2, GOOGLEBOT)).status).toBe(202)
    expect(await conversionsOf(visit('flood-bot1'))).toBe(0)
    await expect.poll(() => eventsOf(visit('flood-bot1'))).toBe(2)
    expect(fake.requests.slice(before).filter((r) => r.body.includes(visit('flood-bot1')))).toEqual([])
  })
})

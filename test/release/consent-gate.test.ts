import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'

// Issue 27 at the qualification gate: a held conversion released later is judged by the consent that applied when it
// arrived (its visit's stored purposes), as a conversion sent at once would be, and the report says which rule decided.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
let app: TestApp
let fake: FakeServer
let key: string
let copKey: string
let secret: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake', 'capture', 'release'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    release: { expireAfterDays: 30 },
    sites: [{
      id: 'shop', name: 'Shop', consent: { banner: 'off' as const }, destinations: { testads: { baseUrl: fake.url, token: 'good' } },
      events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' }],
    }],
  }, { adapters: [testPlatform], builtInPlugins })
  key = await app.createKey('shop')
  const site = app.dcgate.context.sites.byId('shop')!
  copKey = site.copKey
  secret = site.releaseSecret
}, 180_000)
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const sentFor = (messageId: string) => fake.requests.filter((r) => r.body.includes(`"id":"${messageId}"`))
const report = async (messageId: string) => {
  const body = await (await app.admin('GET', '/sites/shop/deliveries')).json() as { deliveries: Record<string, unknown>[] }
  return body.deliveries.filter((d) => d.message_id === messageId)
}

/** A page view whose consent tool (Consent Mode) said what `cmp` says; its visit stores those purposes. */
async function visit(sessionId: string, cmp: Record<string, string>): Promise<void> {
  const response = await app.request(`/collect?cop_key=${copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '81.2.69.142' },
    body: JSON.stringify({
      v: 1, sid: sessionId, vid: `v-${sessionId}`, consent: 'granted', signals: { webdriver: false, interactions: 3, sinceLoadMs: 4000 },
      cmp: { source: 'consent-mode', ...cmp }, hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }],
    }),
  })
  expect(response.status).toBe(202)
  await expect.poll(async () => (await sql<{ n: number }[]>('select count(*)::int as n from visits where session_id = ?', [sessionId]))[0]!.n, { timeout: 5000 }).toBe(1)
}

async function holdAndRelease(messageId: string, sessionId: string, email: string): Promise<void> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'qualified_lead', messageId, context: { traits: { email }, identifiers: { dc_session_id: sessionId, gclid: `g-${messageId}` }, ip: '81.2.69.142' } }),
  })
  expect(response.status).toBe(202)
  expect(await sql('select state from conversions where message_id = ?', [messageId])).toEqual([{ state: 'held' }])
  const released = await app.request(`/api/v1/crm-release/${copKey}/${secret}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event_name: 'qualified_lead', email }) })
  expect(released.status).toBe(200)
}

describe('releasing a held conversion whose visit\'s consent denies advertising', () => {
  it('reaches no ad platform; the report says the matched visit\'s consent allowed measurement only', async () => {
    await visit('sess-analytics-only', { analytics_storage: 'granted', ad_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' })
    await holdAndRelease('held-no-ads', 'sess-analytics-only', 'no-ads@example.com')
    expect(await report('held-no-ads')).toEqual([expect.objectContaining({
      provider: 'testads', status: 'skipped', consent_rule: 'visit',
      error: 'consent (consent-mode, the matched visit) allows measurement but not advertising',
    })])
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(sentFor('held-no-ads')).toEqual([])
  })

  it('a visit that refused everything: skipped as a refusal, naming the rule', async () => {
    await visit('sess-refused', { analytics_storage: 'denied', ad_storage: 'denied' })
    await holdAndRelease('held-refused', 'sess-refused', 'refused@example.com')
    expect(await report('held-refused')).toEqual([expect.objectContaining({ status: 'skipped', consent_rule: 'visit', error: 'the visitor denied consent (consent-mode, the matched visit)' })])
  })

  it('a visit that allowed advertising: released and sent', async () => {
    await visit('sess-ads', { analytics_storage: 'granted', ad_storage: 'granted', ad_user_data: 'granted', ad_personalization: 'granted' })
    await holdAndRelease('held-ads', 'sess-ads', 'ads@example.com')
    await expect.poll(() => sentFor('held-ads').length, { timeout: 5000 }).toBe(1)
    expect((await report('held-ads'))[0]).toMatchObject({ consent_rule: 'visit' })
  })
})

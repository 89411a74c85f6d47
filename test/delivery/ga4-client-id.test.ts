import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeGa4, type FakeGa4 } from '../fakes/ga4.ts'

// Issue 29 item 1: the tracking script keeps the Google tag's `_ga` client id (and `_ga_<container>` session) with
// the visit; a server Purchase matched to that visit reaches GA4 as a `purchase` for that client_id.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const CLIENT_ID = '1197596843.1732780000'
let app: TestApp
let ga4: FakeGa4
let key: string
let copKey: string

beforeAll(async () => {
  ga4 = await startFakeGa4()
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', domains: ['shop.example'], consent: { banner: 'off' },
      destinations: { ga4: { measurementId: ga4.measurementId, apiSecret: ga4.apiSecret, baseUrl: ga4.url } },
    }],
  })
  key = await app.createKey('shop')
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
})
afterAll(async () => {
  await app?.close()
  await ga4?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const post = (body: unknown) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify(body),
})

describe('the GA tag\'s client id reaches GA4', () => {
  it('a Purchase matched to a visit with a _ga cookie is a purchase for that client_id, in its session', async () => {
    const collected = await app.request(`/collect?cop_key=${copKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1' },
      body: JSON.stringify({ v: 1, sid: 'sess-ga4-0001', vid: 'visitor-ga4-1', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }], clickIds: { ga: CLIENT_ID, ga_session: `${ga4.measurementId.slice(2)}.1732786400` } }),
    })
    expect(collected.status).toBeLessThan(300)
    await expect.poll(async () => (await sql<{ click_ids: Record<string, string> }[]>(`select click_ids from visits where session_id = 'sess-ga4-0001'`))[0]?.click_ids, { timeout: 5000 })
      .toMatchObject({ ga: CLIENT_ID })

    const response = await post({
      event: 'Purchase', messageId: 'ga4-order-1', properties: { value: 42.5, currency: 'EUR' },
      context: { traits: { email: 'ga4@example.com' }, identifiers: { dc_session_id: 'sess-ga4-0001' } },
    })
    expect(response.status).toBe(202)
    await expect.poll(() => ga4.events.find((e) => e.params.transaction_id === 'ga4-order-1'), { timeout: 5000 }).toMatchObject({
      client_id: CLIENT_ID, name: 'purchase', params: { value: 42.5, currency: 'EUR', session_id: '1732786400' },
    })
  })
})

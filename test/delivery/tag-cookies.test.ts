import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeGa4, type FakeGa4 } from '../fakes/ga4.ts'
import { startFakeSnapchat, type FakeSnapchat } from '../fakes/snapchat.ts'

// Issue 29: the tracking script keeps the Google tag's `_ga` client id and `_ga_<container>` session, and Snapchat's
// ScCid click id and `_scid` cookie, with the visit; a server Purchase matched to that visit reaches GA4 as a
// `purchase` for that client_id and Snapchat as a v3 PURCHASE carrying both Snap ids.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const CLIENT_ID = '1197596843.1732780000'
const SCCID = '9c1e8a52-6f0b-4d1a-b0e3-7f2c5d9a1e44'
const SCID = '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13'
let app: TestApp
let ga4: FakeGa4
let snap: FakeSnapchat

beforeAll(async () => {
  ;[ga4, snap] = await Promise.all([startFakeGa4(), startFakeSnapchat()])
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', domains: ['shop.example'], consent: { banner: 'off' },
      destinations: {
        ga4: { measurementId: ga4.measurementId, apiSecret: ga4.apiSecret, baseUrl: ga4.url },
        snapchat: { pixelId: snap.pixelId, accessToken: snap.accessToken, baseUrl: snap.url },
      },
    }],
  })
})
afterAll(async () => {
  await app?.close()
  await Promise.all([ga4?.close(), snap?.close()])
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

describe('ids kept from the site\'s own tags reach GA4 and Snapchat', () => {
  it('a Purchase matched to the visit reaches GA4 for its client_id and session, and Snapchat with ScCid and _scid', async () => {
    const copKey = app.dcgate.context.sites.byId('shop')!.copKey
    const clickIds = { ga: CLIENT_ID, ga_session: `${ga4.measurementId.slice(2)}.1732786400`, ScCid: SCCID, scid: SCID }
    const collected = await app.request(`/collect?cop_key=${copKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1' },
      body: JSON.stringify({ v: 1, sid: 'sess-tags-0001', vid: 'visitor-tags-1', hits: [{ t: 'pageview', ts: Date.now(), url: `https://shop.example/?ScCid=${SCCID}` }], clickIds }),
    })
    expect(collected.status).toBeLessThan(300)
    await expect.poll(async () => (await sql<{ click_ids: Record<string, string> }[]>(`select click_ids from visits where session_id = 'sess-tags-0001'`))[0]?.click_ids, { timeout: 5000 })
      .toMatchObject(clickIds)

    const response = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': await app.createKey('shop') },
      body: JSON.stringify({
        event: 'Purchase', messageId: 'tags-order-1', properties: { value: 42.5, currency: 'EUR' },
        context: { traits: { email: 'tags@example.com' }, identifiers: { dc_session_id: 'sess-tags-0001' } },
      }),
    })
    expect(response.status).toBe(202)
    await expect.poll(() => ga4.events.find((e) => e.params.transaction_id === 'tags-order-1'), { timeout: 5000 }).toMatchObject({
      client_id: CLIENT_ID, name: 'purchase', params: { value: 42.5, currency: 'EUR', session_id: '1732786400' },
    })
    await expect.poll(() => snap.events.find((e) => e.event_id === 'tags-order-1'), { timeout: 5000 }).toMatchObject({
      event_name: 'PURCHASE', custom_data: { value: 42.5, currency: 'EUR' }, user_data: { sc_click_id: SCCID, sc_cookie1: SCID },
    })
  })
})

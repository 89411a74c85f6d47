import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'

// End to end with the Meta adapter: a visitor whose browser sent Global Privacy Control buys on a site with
// consent.usPrivacy 'limited'; Meta receives the event with Limited Data Use and its location codes
// (adapters/ads/meta/README.md, "US privacy"). On an 'off' site the same visitor is sent without it.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'

let meta: FakeMeta
let app: TestApp
const keys: Record<string, string> = {}

beforeAll(async () => {
  meta = await startFakeMeta()
  const destinations = { meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url } }
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    sites: [
      { id: 'limited', name: 'Limited', domains: ['shop.example'], consent: { banner: 'off', usPrivacy: 'limited' }, destinations },
      { id: 'off', name: 'Off', domains: ['shop.example'], consent: { banner: 'off' }, destinations },
    ],
  })
  for (const id of ['limited', 'off']) keys[id] = await app.createKey(id)
})
afterAll(async () => {
  await app?.close()
  await meta?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

async function gpcVisit(siteId: string, sessionId: string): Promise<void> {
  const copKey = app.dcgate.context.sites.byId(siteId)!.copKey
  const response = await app.request(`/collect?cop_key=${copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1', 'sec-gpc': '1' },
    body: JSON.stringify({
      v: 1, sid: sessionId, vid: `vis-${sessionId}`, consent: 'granted', signals: { webdriver: false, interactions: 3, sinceLoadMs: 4000 },
      hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }],
    }),
  })
  expect(response.status).toBe(202)
  await expect.poll(async () => (await sql('select 1 from visits where session_id = ? and gpc', [sessionId])).length, { timeout: 5000 }).toBe(1)
}

async function purchase(siteId: string, messageId: string, sessionId: string) {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': keys[siteId]! },
    body: JSON.stringify({
      event: 'Purchase', messageId, properties: { value: 42, currency: 'USD' },
      context: { traits: { email: `${messageId}@example.com`, state: 'CA' }, identifiers: { dc_session_id: sessionId }, ip: '73.162.0.9', userAgent: CHROME, page: { url: 'https://shop.example/thanks' } },
    }),
  })
  expect(response.status).toBe(202)
  return meta.events.find((e) => e.event_id === messageId)
}

describe('a GPC visitor at Meta', () => {
  it("on a 'limited' site: sent with Limited Data Use, in the United States and California", async () => {
    await gpcVisit('limited', 'sess-meta-gpc-1')
    expect(await purchase('limited', 'meta-ldu-1', 'sess-meta-gpc-1')).toMatchObject({
      event_name: 'Purchase', data_processing_options: ['LDU'], data_processing_options_country: 1, data_processing_options_state: 1000,
    })
  })

  it("on an 'off' site: sent without it", async () => {
    await gpcVisit('off', 'sess-meta-gpc-2')
    const sent = await purchase('off', 'meta-off-1', 'sess-meta-gpc-2')
    expect(sent).toMatchObject({ event_name: 'Purchase' })
    expect(sent).not.toHaveProperty('data_processing_options')
  })
})

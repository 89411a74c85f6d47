import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeMicrosoftAds, type FakeMicrosoftAds } from '../fakes/microsoft-ads.ts'

// Issue 24 item 4: Microsoft's Conversions API guide asks for the UET tag's visitor id (`anonymousId`) with every
// event. The tracking script keeps the tag's `_uetvid` cookie with the visit; a server conversion matched to that
// visit, or bringing the id itself as `identifiers.uetvid`, reaches Microsoft with it.
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const UETVID = '839d8b10dcb111ee9d98ad5bcaa80a53'
const MSCLKID = '2a9e8a5ae2d71b5a1c4b1a1e0b1a1e1c'
let app: TestApp
let microsoft: FakeMicrosoftAds
let key: string
let copKey: string

beforeAll(async () => {
  microsoft = await startFakeMicrosoftAds()
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', domains: ['shop.example'], consent: { banner: 'off' },
      destinations: { microsoft_ads: { tagId: microsoft.tagId, apiToken: microsoft.apiToken, baseUrl: microsoft.url } },
    }],
  })
  key = await app.createKey('shop')
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
})
afterAll(async () => {
  await app?.close()
  await microsoft?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const post = (body: unknown) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify(body),
})
const sentEvent = (messageId: string) => microsoft.events.find((e) => e.eventId === messageId) as { userData: Record<string, unknown> } | undefined

describe('the UET visitor id reaches Microsoft as anonymousId', () => {
  it('from the visit the tracking script stored, found by the conversion\'s dc_session_id', async () => {
    const collected = await app.request(`/collect?cop_key=${copKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1' },
      body: JSON.stringify({ v: 1, sid: 'sess-uet-0001', vid: 'visitor-uet-1', hits: [{ t: 'pageview', ts: Date.now(), url: `https://shop.example/?msclkid=${MSCLKID}` }], clickIds: { msclkid: MSCLKID, uetvid: UETVID } }),
    })
    expect(collected.status).toBeLessThan(300)
    await expect.poll(async () => (await sql<{ click_ids: Record<string, string> }[]>(`select click_ids from visits where session_id = 'sess-uet-0001'`))[0]?.click_ids, { timeout: 5000 })
      .toEqual({ msclkid: MSCLKID, uetvid: UETVID })

    const response = await post({ event: 'Lead', messageId: 'ms-lead-visit', context: { traits: { email: 'uet@example.com' }, identifiers: { dc_session_id: 'sess-uet-0001' } } })
    expect(response.status).toBe(202)
    const answer = await response.json() as { events: { identity: { enriched: string[] } }[] }
    expect(answer.events[0]!.identity.enriched).toEqual(expect.arrayContaining(['msclkid', 'uetvid']))
    expect(sentEvent('ms-lead-visit')?.userData).toMatchObject({ anonymousId: UETVID, msclkid: MSCLKID })
  })

  it('given in a server conversion as identifiers.uetvid, like fbp and msclkid', async () => {
    const response = await post({ event: 'Lead', messageId: 'ms-lead-given', context: { traits: { email: 'given@example.com' }, identifiers: { uetvid: UETVID, msclkid: MSCLKID } } })
    expect(response.status).toBe(202)
    expect(sentEvent('ms-lead-given')?.userData).toMatchObject({ anonymousId: UETVID, msclkid: MSCLKID })
  })

  it('left out when nobody knows it: dcgate does not make one up', async () => {
    await post({ event: 'Lead', messageId: 'ms-lead-none', context: { traits: { email: 'none@example.com' } } })
    expect(sentEvent('ms-lead-none')?.userData).not.toHaveProperty('anonymousId')
  })
})

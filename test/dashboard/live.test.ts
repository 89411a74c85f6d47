import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { testPlatform } from '../delivery/test-platform.ts'
import { basicAuth, SHOP_EVENTS } from '../segment/support.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import dashboard from '../../plugins/dashboard/index.ts'
import { rows, signIn } from './pages-client.ts'
import type { Browser } from './support.ts'

// The Live events page: the last requests that reached a site, refused ones with their reason, filterable, with
// nothing personal on it (no email, no key, no path).
let app: TestApp
let operator: Browser
let key: string
let copKey: string
const EMAIL = 'secret.person@example.com'

beforeAll(async () => {
  app = await bootTestApp({
    server: { trustProxy: true },
    plugins: ['intake', 'capture', 'segment', 'dashboard'],
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], events: SHOP_EVENTS }, { id: 'other', name: 'Other' }],
  }, { adapters: [testPlatform], builtInPlugins: { ...builtInPlugins, dashboard } })
  key = await app.createKey('shop')
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
  const segment = (path: string, body: unknown) => app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuth(key) }, body: JSON.stringify(body) })
  const order = (messageId: string, extra: Record<string, unknown> = {}) => ({
    type: 'track', event: 'Order Completed', messageId, userId: 'u-1', properties: { revenue: 10, currency: 'USD', order_id: messageId }, context: { traits: { email: EMAIL } }, ...extra,
  })
  const collect = (origin: string) => app.request(`/collect?cop_key=${copKey}`, {
    method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', origin, 'x-forwarded-for': '73.162.0.1', 'user-agent': 'Mozilla/5.0 Chrome/142.0.0.0' },
    body: JSON.stringify({ v: 1, sid: 'sess00000001x', vid: 'visitor-0001', hits: [{ t: 'pageview', ts: Date.now(), url: `https://shop.example/?email=${EMAIL}` }] }),
  })
  expect((await segment('/v1/track', order('bad-1', { context: { ip: '999.1.1.1', traits: { email: EMAIL } } }))).status).toBe(400)
  expect((await segment('/v1/batch', { batch: [order('good-1'), order('bad-2', { properties: { revenue: 'lots' } })] })).status).toBe(200)
  expect((await collect('https://shop.example')).status).toBeLessThan(300)
  expect((await collect('https://elsewhere.example')).status).toBe(403)
  operator = await signIn(app)
}, 240_000)
afterAll(async () => {
  await app?.close()
})

const live = async (query = '') => {
  const page = await operator.get(`/dashboard/sites/shop/live${query}`)
  expect(page.status).toBe(200)
  return { text: page.text, rows: rows(page.text) }
}

describe('Live events page', () => {
  it('lists the hits and Segment messages that reached the site, newest first, refused ones with their reason', async () => {
    const { rows: shown } = await live()
    expect(shown.map((r) => [r[1], r[2], r[3], r[4]])).toEqual([
      ['Tracking hit', 'POST /collect', '403', 'refused'],
      ['Tracking hit', 'POST /collect', expect.stringMatching(/^2\d\d$/), 'accepted'],
      ['Segment message', 'POST /v1/batch', '200', 'partly refused'],
      ['Segment message', 'POST /v1/track', '400', 'refused'],
    ])
    expect(shown[0]![5]).toBe('Origin https://elsewhere.example is not one of the site&#39;s domains')
    expect(shown[2]![5]).toMatch(/^1 message refused: properties\.revenue: /)
    expect(shown[3]![5]).toMatch(/^context\.ip: /)
  })

  it('filters by kind and by outcome', async () => {
    expect((await live('?kind=segment&outcome=refused')).rows.map((r) => [r[2], r[4]])).toEqual([['POST /v1/batch', 'partly refused'], ['POST /v1/track', 'refused']])
    expect((await live('?kind=hit&outcome=accepted')).rows.map((r) => [r[2], r[4]])).toEqual([['POST /collect', 'accepted']])
    expect((await live('?kind=webhook')).text).toContain('No request matches this filter.')
    // An unknown filter value is ignored rather than refused.
    expect((await live('?kind=nope')).rows).toHaveLength(4)
  })

  it('shows nothing personal: no email, no key, no URL a hit carried', async () => {
    const { text } = await live()
    expect(text).not.toContain('secret.person')
    expect(text).not.toContain(copKey)
    expect(text).not.toContain(key)
    expect(text).not.toContain('shop.example/?')
  })

  it('another site sees none of them', async () => {
    expect((await operator.get('/dashboard/sites/other/live')).text).toContain('No request has reached this site lately.')
  })
})

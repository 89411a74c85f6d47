import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { testPlatform } from '../delivery/test-platform.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import dashboard from '../../plugins/dashboard/index.ts'
import { rows, signIn, until } from './pages-client.ts'
import type { Browser } from './support.ts'

// What a shop owner reads on the Overview: conversions and revenue per day and per event, per platform accepted and
// failed under the platform's name; an order's timeline from the first visit to the platform's answer; the
// Deliveries list's value column and its "waiting" rows.
let app: TestApp
let fake: FakeServer
let operator: Browser
const SESSION = 'sess00000042x'

beforeAll(async () => {
  // The platform refuses the order worth 13.13.
  fake = await startFakeServer((request) => request.body.includes('13.13') ? { status: 400, body: { message: 'Invalid parameter: value' } } : { status: 200, body: {} })
  app = await bootTestApp({
    server: { trustProxy: true },
    plugins: ['intake', 'capture', 'dashboard'],
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', domains: ['shop.example'], destinations: { testads: { baseUrl: fake.url, token: 'good' } },
      events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule' }],
    }],
  }, { adapters: [{ ...testPlatform, label: 'Test Ads' }], builtInPlugins: { ...builtInPlugins, dashboard } })
  const copKey = app.dcgate.context.sites.byId('shop')!.copKey
  // The buyer's first visit, from a search page, before the order.
  const visit = await app.request(`/collect?cop_key=${copKey}`, {
    method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example', 'x-forwarded-for': '73.162.0.1', 'user-agent': 'Mozilla/5.0 Chrome/142.0.0.0' },
    body: JSON.stringify({ v: 1, sid: SESSION, vid: 'visitor-0042', hits: [{ t: 'pageview', ts: Date.now() - 60_000, url: 'https://shop.example/shoes?email=ann@example.com', ref: 'https://search.example/?q=shoes' }] }),
  })
  expect(visit.status).toBeLessThan(300)
  await until(async () => (await sql<{ n: number }[]>(`select count(*)::int as n from visits where session_id = '${SESSION}'`))[0]!.n === 1)
  const key = await app.createKey('shop')
  const send = async (event: string, messageId: string, properties: Record<string, unknown>, identifiers: Record<string, unknown> = {}) => {
    const answer = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event, messageId, properties, context: { traits: { email: 'ann@example.com' }, identifiers } }),
    })
    expect(answer.status, await answer.text()).toBeLessThan(300)
  }
  await send('Purchase', 'm-1', { value: 100, currency: 'EUR', order_id: 'o-1' }, { dc_session_id: SESSION })
  await send('Purchase', 'm-2', { value: 50.5, currency: 'EUR', order_id: 'o-2' })
  await send('Purchase', 'm-3', { value: 13.13, currency: 'EUR', order_id: 'o-3' })
  await send('demo_booked', 'm-4', {})
  await until(async () => (await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where status in ('pending', 'retrying')`))[0]!.n === 0)
  operator = await signIn(app)
}, 240_000)
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const tableAfter = (html: string, caption: string) => rows(html.slice(html.indexOf(`<caption>${caption}</caption>`)))

describe('Overview for a shop owner', () => {
  it('shows conversions and revenue per day, today on top', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/overview')
    const today = new Date().toISOString().slice(0, 10)
    expect(tableAfter(text, 'Conversions and revenue per day')[0]).toEqual([today, '4', '163.63 EUR'])
    expect(text).toContain('<title id="chart-conversions-title">Conversions per day</title>')
  })

  it('shows conversions and revenue per event, by the event\'s name', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/overview')
    expect(tableAfter(text, 'Per event')).toEqual([['Purchase', '3', '163.63 EUR'], ['Demo booked', '1', '–']])
  })

  it('shows per platform what it accepted and refused, by the platform\'s name', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/overview')
    expect(tableAfter(text, 'Per platform')[0]).toEqual(['Test Ads', '3', '1', '0', '0'])
    expect(text).toContain('Test Ads: deliveries per day')
    expect(text).not.toContain('testads: deliveries per day')
  })
})

describe('Order timeline', () => {
  it('is linked from the deliveries list, which shows each delivery\'s value', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/deliveries')
    expect(text).toContain('href="/dashboard/sites/shop/deliveries?order=o-1"')
    const row = rows(text).find((cells) => cells[2] === 'o-3')!
    expect(row.slice(3, 6)).toEqual(['13.13 EUR', 'Test Ads', 'failed'])
  })

  it('runs from the first visit to the platform\'s answer, pages without their query', async () => {
    const { status, text } = await operator.get('/dashboard/sites/shop/deliveries?order=o-1')
    expect(status).toBe(200)
    const steps = [...text.slice(text.indexOf('<ol class="timeline">')).matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim())
    expect(steps).toEqual([
      expect.stringMatching(/UTC First visit: landed on shop\.example\/shoes, coming from search\.example\/ \(1 page\)$/),
      expect.stringMatching(/UTC Purchase received from automation \(signed or keyed\), value 100 EUR$/),
      expect.stringMatching(/UTC Test Ads: accepted \(HTTP 200\) Details of the Test Ads delivery$/),
    ])
    expect(text).not.toContain('ann@example.com')
  })

  it('answers 404 for an order the site never received', async () => {
    expect((await operator.get('/dashboard/sites/shop/deliveries?order=nope')).status).toBe(404)
  })
})

describe('Rough edges', () => {
  it('a waiting delivery is amber with its last error in the normal colour, not red', async () => {
    await sql(`update deliveries set status = 'retrying', next_attempt_at = now() + interval '1 hour' where conversion_id = (select id from conversions where order_id = 'o-3')`)
    const { text } = await operator.get('/dashboard/sites/shop/deliveries?status=retrying')
    expect(text).toContain('<span class="badge waiting">retrying</span>')
    expect(text).toContain('<td class="reason-note">waiting to try again; last attempt: ')
    expect(text).not.toContain('<td class="reason">')
  })

  it('dates stay on one line', async () => {
    const css = await (await app.request('/dashboard/assets/dashboard.css')).text()
    expect(css).toMatch(/time, \.nowrap \{ white-space: nowrap; \}/)
  })
})

import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { testPlatform } from '../delivery/test-platform.ts'
import { hashIdentity } from '../../core/identity/hash.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { adapters } from '../../adapters/index.ts'
import { rows, signIn, until } from './pages-client.ts'
import type { Browser } from './support.ts'

// The Reconciliation page and the Overview's delivery health, from real Shopify webhooks (orders/paid, signed):
// five orders today, of which the platform accepts one; the gap is one consent (the buyer's visit denied it), one
// bot (the buyer's only visit was a bot), one failed (refused), one pending (the platform is down, retrying). A
// Purchase sent through the automation route is no payment-confirmed order and is not counted.
const SECRET = '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'
const ORDER = readFileSync(new URL('../sources/fixtures/shopify-orders-paid.json', import.meta.url), 'utf8')

let app: TestApp
let platform: FakeServer
let operator: Browser
let mode: 'ok' | 'refuse' | 'down' = 'ok'

beforeAll(async () => {
  platform = await startFakeServer(() => mode === 'ok' ? { status: 200, body: { received: 1 } }
    : mode === 'refuse' ? { status: 400, body: { message: 'Invalid parameter: currency is not supported' } }
      : { status: 503, body: { message: 'Service unavailable' } })
  app = await bootTestApp({
    server: { trustProxy: true },
    plugins: ['intake', 'dashboard'],
    delivery: { workerIntervalMs: 25 },
    sites: [{ id: 'shop', name: 'Shop', sources: { shopify: { secret: SECRET } }, destinations: { testads: { baseUrl: platform.url, token: 'good' } } }],
  }, { adapters: [testPlatform, ...adapters.filter((a) => a.kind === 'intake-source')], builtInPlugins })
  const visit = (email: string, column: 'is_bot' | 'consent', value: string) => sql(
    `insert into visits (id, site_id, session_id, email_hash, started_at, ${column}) values (gen_random_uuid(), 'shop', ?, ?, now() - interval '1 hour', ${value})`,
    [`sess-${email}`, hashIdentity({ email }).email],
  )
  await visit('bob@example.com', 'is_bot', 'true')
  await visit('carol@example.com', 'consent', `'denied'`)
  await order(1, 'ann@example.com')
  await order(2, 'bob@example.com')
  await order(3, 'carol@example.com')
  await settle()
  mode = 'refuse'
  await order(4, 'dave@example.com')
  await settle()
  mode = 'down'
  await order(5, 'erin@example.com')
  await until(async () => (await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where status = 'retrying' and attempts > 0`))[0]!.n === 1)
  const key = await app.createKey('shop')
  const automation = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Purchase', messageId: 'not-an-order', properties: { value: 5, currency: 'EUR' }, context: { traits: { email: 'zoe@example.com' } } }),
  })
  expect([202, 207]).toContain(automation.status)
  operator = await signIn(app)
}, 60_000)
afterAll(async () => {
  await app?.close()
  await platform?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

/** A Shopify orders/paid webhook for a new order by `email`, paid now, signed as Shopify signs it. */
async function order(n: number, email: string): Promise<void> {
  const body = ORDER.replace('"id": 820982911946154508', `"id": ${820982911946154508n + BigInt(n)}`)
    .replaceAll('ann.example@gmail.com', email).replace(/"20\d\d-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)"/g, `"${new Date().toISOString()}"`)
  const copKey = app.dcgate.context.sites.byId('shop')!.copKey
  const response = await app.request(`/api/v1/conversions/shopify/${copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-shopify-topic': 'orders/paid', 'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(body).digest('base64') },
    body,
  })
  expect(response.status, await response.clone().text()).toBeLessThan(300)
}

async function settle(): Promise<void> {
  await until(async () => (await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where status = 'pending'`))[0]!.n === 0)
}

describe('Reconciliation page', () => {
  it('counts today\'s payment-confirmed orders against what the platform accepted, the gap by reason', async () => {
    const { status, text } = await operator.get('/dashboard/sites/shop/reconciliation')
    expect(status).toBe(200)
    const today = new Date().toISOString().slice(0, 10)
    // Day, platform, orders, accepted, gap, consent, bot, skipped, failed, pending.
    expect(rows(text)).toEqual([[today, 'testads', '5', '1', '4', '1', '1', '0', '1', '1']])
    expect(text).toContain('href="/dashboard/sites/shop/reconciliation"')
  })
})

describe('Delivery health in the Overview', () => {
  it('shows the share sent in the window, since when the platform is failing, and its last refusal with the reason', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/overview')
    const section = /<section id="health"[\s\S]*?<\/section>/.exec(text)?.[0] ?? ''
    expect(section).toContain('Delivery health, last 60 minutes')
    const [row] = rows(section)
    // Every delivery counts here, the automation Purchase too: sent 1; failed 1, retrying 2 (their last attempt failed).
    expect(row![0]).toBe('testads')
    expect(row![1]).toBe('25% (1 of 4)')
    expect(row![2]).toMatch(/^failing since /)
    expect(row![3]).toMatch(/HTTP 400$/)
    expect(row![4]).toBe('Invalid parameter: currency is not supported')
    const [failed] = await sql<{ updated_at: Date }[]>(`select updated_at from deliveries where status = 'failed'`)
    expect(section).toContain(`datetime="${new Date(failed!.updated_at).toISOString()}"`)
  })
})

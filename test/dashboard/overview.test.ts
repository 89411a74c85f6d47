import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { niceMax } from '../../plugins/dashboard/charts.ts'
import { lastDays } from '../../plugins/dashboard/pages/overview.ts'
import { uniqueEmail, type Browser } from './support.ts'
import { bootShopWithHeldLeads, signIn, until } from './pages-client.ts'

// The Overview page: per-day delivery charts per platform, match quality, what waits, email checks, the last errors.
let app: TestApp
const MEMBER = uniqueEmail('owner', 'other.example')
let fake: FakeServer
let operator: Browser
let refusal: string | undefined

beforeAll(async () => {
  fake = await startFakeServer(() => refusal ? { status: 400, body: { message: refusal } } : { status: 200, body: {} })
  app = await bootShopWithHeldLeads(fake.url, MEMBER)
  const key = await app.createKey('shop')
  const send = (event: string, messageId: string, context: Record<string, unknown>) => app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify({ event, messageId, context }),
  })
  await send('Purchase', 'p-1', { traits: { email: 'ann@example.com' }, identifiers: { gclid: 'g-1' } })
  await send('Purchase', 'p-2', { traits: { email: 'bob@example.com', phone: '+33 6 12 34 56 78' } })
  refusal = 'Invalid parameter: value must be positive'
  await send('Purchase', 'p-3', { traits: { phone: '+33 6 12 34 56 79' } })
  await send('qualified_lead', 'held-1', { traits: { email: 'carol@example.com' } })
  await sql(`insert into identified_users (id, site_id, email, email_hash, source) values (gen_random_uuid(), 'shop', 'dan@example.com', repeat('d', 64), 'form')`)
  await sql(`insert into email_check_quotas (site_id, checks, billable) values ('shop', 123, 0)`)
  await until(async () => (await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where status in ('pending', 'retrying')`))[0]!.n === 0)
  operator = await signIn(app)
}, 60_000)
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

describe('Overview page', () => {
  it('draws deliveries per day per outcome for each platform as an SVG chart with a title and its numbers as a table', async () => {
    const { status, text } = await operator.get('/dashboard/sites/shop/overview')
    expect(status).toBe(200)
    expect(text).toMatch(/<svg viewBox="0 0 640 200" role="img" aria-labelledby="chart-testads-title chart-testads-desc"/)
    expect(text).toContain('<title id="chart-testads-title">testads: deliveries per day</title>')
    expect(text).toContain('3 in all over 14 columns; sent 2, failed 1, skipped 0, waiting 0.')
    const today = new Date().toISOString().slice(5, 10)
    expect(text).toContain(`<tr><th scope="row">${today}</th><td>2</td><td>1</td><td>0</td><td>0</td></tr>`)
    expect(text).not.toMatch(/<script>|style="/)
  })

  it('shows match quality, held leads waiting, identified users and email checks against the free quota', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/overview')
    // Four conversions (the held lead counts): click id 1, email 3, phone 2.
    expect(text).toContain('aria-label="Click id: 25% (1 of 4)"')
    expect(text).toContain('aria-label="Email: 75% (3 of 4)"')
    expect(text).toContain('aria-label="Phone: 50% (2 of 4)"')
    expect(text).toMatch(/Held leads waiting<\/p><p class="card-value">1</)
    expect(text).toMatch(/Identified users<\/p><p class="card-value">1</)
    expect(text).toMatch(/Email checks used<\/p><p class="card-value">123 of 500</)
    expect(text).toContain('free plan: 377 left')
  })

  it('lists the last errors per platform, linked to the delivery', async () => {
    const { text } = await operator.get('/dashboard/sites/shop/overview')
    const [failed] = await sql<{ id: string }[]>(`select id from deliveries where status = 'failed'`)
    expect(text).toContain(`href="/dashboard/sites/shop/deliveries?id=${failed!.id}"`)
    expect(text).toContain('Invalid parameter: value must be positive')
  })

  it('a member of another site gets 403; their own site without platforms says so', async () => {
    const member = await signIn(app, MEMBER)
    expect((await member.get('/dashboard/sites/shop/overview')).status).toBe(403)
    const own = await member.get('/dashboard/sites/other/overview')
    expect(own.status).toBe(200)
    expect(own.text).toContain('No ad platform is configured for this site')
    expect(own.text).toContain('aria-label="Email: 0% (0 of 0)"')
  })
})

describe('chart helpers', () => {
  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 10, 11, 180, 4999].map(niceMax)).toEqual([1, 1, 5, 10, 20, 200, 5000])
  })

  it('lists the last days oldest first in UTC', () => {
    expect(lastDays(3, new Date('2026-03-01T01:00:00Z'))).toEqual(['2026-02-27', '2026-02-28', '2026-03-01'])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { testPlatform } from '../delivery/test-platform.ts'
import { defineAdPlatform } from '../../core/registry.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import dashboard from '../../plugins/dashboard/index.ts'
import { uniqueEmail, type Browser } from './support.ts'
import { rows, signIn, until } from './pages-client.ts'
import { erasePastRetryWindow } from '../../core/delivery/queries/clear-fields.ts'

// The Deliveries page as a site owner uses it: the report with its filter, a delivery's request and answer, Retry.
let app: TestApp
const MEMBER = uniqueEmail('owner', 'other.example')
let fake: FakeServer
let operator: Browser
/** While set, the fake platform refuses every event with a 400 and this message. */
let refusal: string | undefined = 'Invalid parameter: event_name'
/** The test platform, taking refunds too: one JSON request of retractions and restatements. */
const refundingPlatform = defineAdPlatform({
  ...testPlatform,
  adjustments: {
    maxBatchSize: 10,
    maxConversionAgeDays: 54,
    toRequest: (items, options) => ({
      url: `${options.baseUrl}/v1/refunds`, method: 'POST', headers: { 'content-type': 'application/json', 'authorization': `Bearer ${options.token}` },
      body: JSON.stringify({ refunds: items.map((i) => ({ id: i.conversion.messageId, type: i.adjustment.type, value: i.adjustment.value })) }),
    }),
    parseResponse: (_response, items) => items.map(() => ({ status: 'sent' as const })),
  },
})
const page = (query = '') => operator.get(`/dashboard/sites/shop/deliveries${query}`)

beforeAll(async () => {
  fake = await startFakeServer((request) => refusal
    ? { status: 400, body: { message: refusal } }
    : { status: 200, body: { received: (JSON.parse(request.body) as { events: unknown[] }).events.length } })
  app = await bootTestApp({
    // The browser stand-in signs in from an address of its own per run (X-Forwarded-For): sign-in limits are shared on Redis.
    server: { trustProxy: true },
    plugins: ['intake', 'dashboard'],
    delivery: { workerIntervalMs: 25 },
    sites: [
      { id: 'shop', name: 'Shop', destinations: { testads: { baseUrl: fake.url, token: 'tok-secret-123456' } } },
      { id: 'other', name: 'Other shop', members: [MEMBER] },
    ],
  }, { adapters: [refundingPlatform], builtInPlugins: { ...builtInPlugins, dashboard } })
  const key = await app.createKey('shop')
  for (const [messageId, event] of [['order-1', 'Purchase'], ['order-2', 'Purchase'], ['lead-1', 'Lead']] as const) {
    const response = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
      body: JSON.stringify({ event, messageId, properties: { value: 10, currency: 'EUR', order_id: messageId }, context: { traits: { email: 'ann@example.com' }, ip: '203.0.113.77', userAgent: 'Mozilla/5.0 TestBrowser' } }),
    })
    // 207: stored, and the inline attempt was refused by the platform.
    expect(response.status).toBe(207)
  }
  await until(async () => (await deliveries()).every((d) => d.status === 'failed'))
  operator = await signIn(app)
}, 60_000)
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const deliveries = () => sql<{ id: string, status: string, message_id: string, attempts: number }[]>(
  `select d.id, d.status, d.attempts, c.message_id from deliveries d join conversions c on c.id = d.conversion_id where d.site_id = 'shop' order by c.message_id`)

describe('Deliveries page', () => {
  it('lists each delivery with event, order id, value, platform, status, HTTP status, attempts and why it was not sent', async () => {
    const { status, text } = await page()
    expect(status).toBe(200)
    for (const header of ['Platform', 'Status', 'Reason', 'Event', 'Order id', 'Value', 'HTTP status', 'Attempts']) expect(text).toContain(`<th scope="col">${header}</th>`)
    const table = rows(text)
    expect(table).toHaveLength(3)
    expect(table.map((cells) => cells.slice(1, 9))).toEqual(expect.arrayContaining([
      ['Purchase', 'order-1', '10 EUR', 'testads', 'failed', '400', '1', 'Invalid parameter: event_name'],
      ['Lead', 'lead-1', '10 EUR', 'testads', 'failed', '400', '1', 'Invalid parameter: event_name'],
    ]))
    expect(text).toContain('<button type="submit" class="button small">Retry</button>')
  })

  it('filters by event, status, platform and day with a GET form', async () => {
    expect(rows((await page('?event=Lead')).text).map((cells) => cells[2])).toEqual(['lead-1'])
    expect(rows((await page('?status=sent')).text)).toEqual([])
    expect(rows((await page('?status=failed&platform=testads')).text)).toHaveLength(3)
    expect(rows((await page('?platform=meta')).text)).toEqual([])
    expect(rows((await page('?from=2000-01-01&to=2000-01-02')).text)).toEqual([])
    const today = new Date().toISOString().slice(0, 10)
    expect(rows((await page(`?from=${today}&to=${today}`)).text)).toHaveLength(3)
    expect(await page('?event=Lead')).toMatchObject({ text: expect.stringContaining('<input type="text" name="event" value="Lead"') })
  })

  it('answers a filter it cannot read with 400 and says which field', async () => {
    expect(await page('?status=lost')).toMatchObject({ status: 400, text: expect.stringContaining('Status: one of') })
    expect(await page('?from=2026-02-30')).toMatchObject({ status: 400, text: expect.stringContaining('From: a date') })
    expect(await page('?platform=%3Cscript%3E')).toMatchObject({ status: 400, text: expect.not.stringContaining('<script>') })
    expect((await page('?before=not-a-position')).status).toBe(400)
    expect((await page(`?event=${'x'.repeat(300)}`)).status).toBe(400)
  })

  it('shows one delivery: the request rebuilt with hashes only and credentials, IP and user agent redacted, and the answer', async () => {
    const [delivery] = (await deliveries()).filter((d) => d.message_id === 'order-1')
    // IP and user agent are kept while a delivery is under way (cleared once every delivery ended): as then.
    await sql(`update conversions set ip = '203.0.113.77', user_agent = 'Mozilla/5.0 TestBrowser' where message_id = 'order-1'`)
    const { status, text } = await page(`?id=${delivery!.id}`)
    expect(status).toBe(200)
    expect(text).toContain('POST')
    expect(text).toContain(`${fake.url}/v1/events`)
    expect(text).toContain('authorization: [redacted]')
    expect(text).not.toContain('tok-secret-123456')
    expect(text).not.toContain('203.0.113.77')
    expect(text).not.toContain('ann@example.com')
    expect(text).toContain('&quot;ip&quot;: &quot;[redacted]&quot;')
    expect(text).not.toContain('TestBrowser')
    // The email as the platform gets it: SHA-256 of the normalised address.
    expect(text).toMatch(/&quot;email&quot;: &quot;[0-9a-f]{64}&quot;/)
    expect(text).toContain('Invalid parameter: event_name')
    expect((await page('?id=00000000-0000-4000-8000-000000000000')).status).toBe(404)
  })

  it('Retry makes one failed delivery due again, and the platform receives it', async () => {
    refusal = undefined
    const [delivery] = (await deliveries()).filter((d) => d.message_id === 'order-1')
    const before = fake.requests.length
    const response = await operator.post('/dashboard/sites/shop/deliveries/retry', { id: delivery!.id })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/dashboard/sites/shop/deliveries')
    await until(async () => (await deliveries()).find((d) => d.id === delivery!.id)!.status === 'sent')
    expect(fake.requests.slice(before).some((r) => r.body.includes('"id":"order-1"'))).toBe(true)
    expect((await deliveries()).filter((d) => d.status === 'failed').map((d) => d.message_id)).toEqual(['lead-1', 'order-2'])
    expect((await page()).text).toContain('The delivery is due again')
    const audit = await sql<{ action: string, detail: string }[]>(`select action, detail from dashboard_audit where action = 'delivery.retry'`)
    expect(audit).toEqual([expect.objectContaining({ detail: delivery!.id })])
    // A delivery that is not failed any more cannot be retried.
    const again = await operator.post('/dashboard/sites/shop/deliveries/retry', { id: delivery!.id })
    expect(again.status).toBe(303)
    expect((await page()).text).toContain('not failed')
  })

  it('Retry of everything failed in the filter retries only what the filter shows', async () => {
    const response = await operator.post('/dashboard/sites/shop/deliveries/retry-failed', { event: 'Purchase', status: 'failed' })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toBe('/dashboard/sites/shop/deliveries?status=failed&event=Purchase')
    await until(async () => (await deliveries()).find((d) => d.message_id === 'order-2')!.status === 'sent')
    expect((await deliveries()).find((d) => d.message_id === 'lead-1')!.status).toBe('failed')
    expect((await page()).text).toContain('1 failed delivery is due again.')
    // What is sent again is what was sent first: the failed delivery kept the buyer's IP address for its retry.
    const sentOrder2 = fake.requests.filter((r) => r.body.includes('"id":"order-2"')).map((r) => (JSON.parse(r.body) as { events: { id: string, ip?: string }[] }).events.find((e) => e.id === 'order-2'))
    expect(sentOrder2.map((e) => e?.ip)).toEqual(['203.0.113.77', '203.0.113.77'])
    // Every delivery of it ended sent: nothing can be retried, so the clear fields are gone.
    expect(await sql(`select ip, user_agent, clear_erased_at is not null as erased from conversions where message_id = 'order-2'`)).toEqual([{ ip: null, user_agent: null, erased: true }])
  })

  it('refuses a Retry without the session\'s CSRF token', async () => {
    const [lead] = (await deliveries()).filter((d) => d.message_id === 'lead-1')
    const forged = await operator.post('/dashboard/sites/shop/deliveries/retry', { id: lead!.id, csrf: 'forged' })
    expect(forged.status).toBe(403)
    expect((await deliveries()).find((d) => d.id === lead!.id)!.status).toBe('failed')
  })

  it('pages 50 at a time, newest first, with no row missed or repeated', async () => {
    await sql(`insert into conversions (id, site_id, message_id, order_id, source, event, occurred_at, channel, confirmation, state, created_at)
      select gen_random_uuid(), 'shop', 'paged-' || n, 'paged-' || n, 'automation', 'Paged', now(), 'web', 'confirmed', 'accepted', now() - interval '1 hour'
      from generate_series(1, 120) n`)
    await sql(`insert into deliveries (id, conversion_id, site_id, provider, status, error, created_at)
      select gen_random_uuid(), c.id, 'shop', 'testads', 'skipped', 'test row', now() - interval '1 hour' from conversions c where c.message_id like 'paged-%'`)
    const seen: string[] = []
    let next = '?event=Paged'
    for (let pages = 0; next && pages < 5; pages++) {
      const { text } = await page(next)
      const table = rows(text)
      expect(table.length).toBeLessThanOrEqual(50)
      seen.push(...table.map((cells) => cells[2]!))
      next = /<a href="\/dashboard\/sites\/shop\/deliveries(\?[^"]+)">Older<\/a>/.exec(text)?.[1]?.replaceAll('&amp;', '&') ?? ''
    }
    expect(seen).toHaveLength(120)
    expect(new Set(seen).size).toBe(120)
  })

  it('a member of another site gets 403', async () => {
    const member = await signIn(app, MEMBER)
    expect((await member.get('/dashboard/sites/shop/deliveries')).status).toBe(403)
    const [lead] = (await deliveries()).filter((d) => d.message_id === 'lead-1')
    expect((await member.post('/dashboard/sites/shop/deliveries/retry', { id: lead!.id })).status).toBe(403)
    expect((await member.get('/dashboard/sites/other/deliveries')).status).toBe(200)
  })

  it('past delivery.retryWindowDays the clear fields are erased, and a Retry is refused with the reason instead of sent without them', async () => {
    const [lead] = (await deliveries()).filter((d) => d.message_id === 'lead-1')
    expect(await sql(`select ip, user_agent from conversions where message_id = 'lead-1'`)).toEqual([{ ip: '203.0.113.77', user_agent: 'Mozilla/5.0 TestBrowser' }])
    // Within the window the erasure leaves it alone; eight days later (the default window is 7) it erases them.
    expect(await erasePastRetryWindow(app.dcgate.context.prepared, 7, 1000)).toBe(0)
    await sql(`update conversions set created_at = now() - interval '8 days' where message_id = 'lead-1'`)
    expect(await erasePastRetryWindow(app.dcgate.context.prepared, 7, 1000)).toBe(1)
    expect(await sql(`select ip, user_agent, clear_erased_at is not null as erased from conversions where message_id = 'lead-1'`)).toEqual([{ ip: null, user_agent: null, erased: true }])

    const before = fake.requests.length
    const response = await operator.post('/dashboard/sites/shop/deliveries/retry', { id: lead!.id })
    expect(response.status).toBe(303)
    expect((await page()).text).toContain('Not retried: the conversion&#39;s IP address and user agent were erased on')
    expect((await deliveries()).find((d) => d.id === lead!.id)!.status).toBe('failed')
    const all = await operator.post('/dashboard/sites/shop/deliveries/retry-failed', { event: 'Lead' })
    expect(all.status).toBe(303)
    expect((await page('?event=Lead')).text).toContain('No failed delivery is due again. 1 older than 7 days was not retried')
    const api = await app.admin('POST', '/sites/shop/deliveries/retry', { id: lead!.id })
    expect(api.status).toBe(409)
    expect(await api.json()).toMatchObject({ message: expect.stringContaining('delivery.retryWindowDays: 7') })
    expect(await (await app.admin('POST', '/sites/shop/deliveries/retry', { failed: true })).json()).toEqual({ requeued: [], refused: [{ id: lead!.id, reason: expect.stringMatching(/^not retried: /) }] })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(fake.requests.length).toBe(before)

    // The detail page says the fields were erased, not that they are hidden, and offers no Retry.
    const { text } = await page(`?id=${lead!.id}`)
    expect(text).toContain('were erased on')
    expect(text).toContain('A retry is refused')
    expect(text).not.toContain('the IP address and the user agent are shown as [redacted]')
    expect(text).not.toContain('class="button small">Retry</button>')
  })

  it('shows a refund told to the platform as such, with its refund and its request through the adapter\'s refund mapping', async () => {
    const [sent] = (await deliveries()).filter((d) => d.message_id === 'order-1')
    const [row] = await sql<{ id: string }[]>(`insert into deliveries (id, conversion_id, site_id, provider, status, error, kind, refund_id, adjustment)
      select gen_random_uuid(), conversion_id, site_id, provider, 'skipped', 'refund not sent: not supported by testads', 'adjustment', 'refund-9',
        '{"type":"restatement","refundId":"refund-9","at":"2026-11-20T10:00:00.000Z","value":4,"currency":"EUR"}'::jsonb
      from deliveries where id = ? returning id`, [sent!.id])
    const table = rows((await page('?event=Purchase&status=skipped')).text)
    expect(table.map((cells) => cells.slice(1, 9))).toEqual([['Purchase: refund (restatement)', 'order-1', '10 EUR', 'testads', 'skipped', '–', '0', 'refund not sent: not supported by testads']])
    const { text } = await page(`?id=${row!.id}`)
    expect(text).toContain('refund-9, value left 4 EUR')
    expect(text).toContain(`POST ${fake.url}/v1/refunds`)
    expect(text).toMatch(/&quot;type&quot;: &quot;restatement&quot;,\s+&quot;value&quot;: 4/)
    expect(text).not.toContain('tok-secret-123456')
  })

})

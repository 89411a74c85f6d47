import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { PLATFORMS, startAllPlatforms, type AllPlatforms } from '../fakes/all-platforms.ts'

// The done-when path: Shopify's orders/paid example, signed as Shopify signs it, posted to the public
// source route of a site connected to all eight platforms, becomes one payment_confirmed Purchase delivered
// eight times, each fake checking what its real API checks. A replay delivers nothing new; a bad HMAC gets 401.
const SECRET = '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'
const ORDER_ID = '820982911946154508'
const MESSAGE_ID = `shopify-order-${ORDER_ID}`
let app: TestApp
let platforms: AllPlatforms
let url: string

/** The documented example order, paid a minute ago (the platforms refuse events older than their windows). */
function paidOrder(): string {
  const paidAt = new Date(Date.now() - 60_000).toISOString()
  return readFileSync(new URL('../sources/fixtures/shopify-orders-paid.json', import.meta.url), 'utf8')
    .replace(/"processed_at": "[^"]*"/, `"processed_at": "${paidAt}"`)
    .replace(/"created_at": "[^"]*"/, `"created_at": "${paidAt}"`)
}

function post(raw: string, hmac = createHmac('sha256', SECRET).update(raw).digest('base64')) {
  return app.request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'x-shopify-topic': 'orders/paid', 'x-shopify-hmac-sha256': hmac,
      'x-shopify-webhook-id': crypto.randomUUID(), 'x-shopify-shop-domain': 'example-shop.myshopify.com',
    },
    body: raw,
  })
}

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const deliveries = () => sql<{ provider: string, status: string, error: string | null }[]>(
  `select d.provider, d.status, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ? order by d.provider`, [MESSAGE_ID])

beforeAll(async () => {
  platforms = await startAllPlatforms()
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [{ id: 'shop', name: 'Shop', destinations: platforms.destinations, sources: { shopify: { secret: SECRET } } }],
  })
  url = `/api/v1/conversions/shopify/${app.dcgate.context.sites.byId('shop')!.copKey}`
})
afterAll(async () => {
  await app?.close()
  await platforms?.close()
})

describe('a Shopify orders/paid webhook, on a site connected to all eight platforms', () => {
  it('a bad HMAC answers 401 and stores nothing', async () => {
    const response = await post(paidOrder(), createHmac('sha256', 'not-the-secret').update('x').digest('base64'))
    expect(response.status).toBe(401)
    expect(await sql('select 1 from conversions')).toEqual([])
  })

  it('becomes one payment_confirmed Purchase, stored once and delivered to all eight platforms', async () => {
    const response = await post(paidOrder())
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ accepted: true, source: 'shopify', events: [{ messageId: MESSAGE_ID, success: true }] })
    expect(await sql('select standard_event, confirmation, source, source_event_type, order_id, value, currency, country from conversions where message_id = ?', [MESSAGE_ID]))
      .toEqual([{ standard_event: 'Purchase', confirmation: 'payment_confirmed', source: 'shopify', source_event_type: 'orders/paid', order_id: ORDER_ID, value: 249.99, currency: 'EUR', country: expect.stringMatching(/^[A-Z]{2}$/) }])
    await expect.poll(async () => (await deliveries()).filter((d) => d.status === 'sent').length, { timeout: 15_000 }).toBe(8)
    expect((await deliveries()).map((d) => d.provider)).toEqual([...PLATFORMS].sort())
    expect(platforms.acceptedBy(MESSAGE_ID).sort()).toEqual([...PLATFORMS].sort())
  })

  it('each of the eight delivery records carries the fields the export of validated conversions reports', async () => {
    const report = await (await app.admin('GET', '/sites/shop/deliveries')).json() as { deliveries: Record<string, unknown>[] }
    const rows = report.deliveries.filter((d) => d.message_id === MESSAGE_ID)
    expect(rows.map((d) => d.provider).sort()).toEqual([...PLATFORMS].sort())
    for (const row of rows) {
      expect(row).toMatchObject({
        delivery_id: row.id, status: 'sent', http_status: expect.any(Number), confirmation: 'payment_confirmed', source: 'shopify',
        source_event_type: 'orders/paid', order_id: ORDER_ID, value: 249.99, currency: 'EUR', country: expect.stringMatching(/^[A-Z]{2}$/),
        has_consent: false, session_id: null, user_id: expect.stringMatching(/^\d+$/), content_name: expect.any(String),
      })
      expect(row).toHaveProperty('content_category')
    }
  })

  it('a replay (Shopify retrying, or a second subscription) answers 200 and delivers nothing new', async () => {
    const before = platforms.requestCount()
    const replay = await post(paidOrder())
    expect(replay.status).toBe(200)
    expect(await replay.json()).toMatchObject({ events: [{ messageId: MESSAGE_ID, message: 'duplicate_delivery_skipped' }] })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(platforms.requestCount()).toBe(before)
    expect(await deliveries()).toHaveLength(8)
  })
})

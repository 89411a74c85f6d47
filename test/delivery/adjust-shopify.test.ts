import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { SCOPES, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { startRefundPlatforms, type RefundPlatforms } from './adjust-support.ts'

// Issue 18's done-when, end to end, as issue 24 item 3 asks it: Shopify's documented refunds/create sample, signed as
// Shopify signs it, for an order delivered to Google Ads and Meta, on a site whose Google refresh token has only the
// Data Manager scope, leaves dcgate as a restatement through the Data Manager API's events:ingest (the same
// transactionId, action and identifiers, the value left), and Meta's report row says Meta takes no refunds. A retried
// webhook sends nothing more. The fake refuses the Google Ads API to that token, as Google does.
const SECRET = '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'
const ORDER_ID = '820982911946154508'
let app: TestApp
let google: FakeGoogleAds
let platforms: RefundPlatforms
let url: string

const fixture = (name: string) => readFileSync(new URL(`../sources/fixtures/${name}`, import.meta.url), 'utf8')
/** The documented samples, moved to now: the order paid a minute ago, the refund just made. */
const paidOrder = () => {
  const paidAt = new Date(Date.now() - 60_000).toISOString()
  return fixture('shopify-orders-paid.json').replace(/"processed_at": "[^"]*"/, `"processed_at": "${paidAt}"`).replace(/"created_at": "[^"]*"/, `"created_at": "${paidAt}"`)
}
const refundNow = () => fixture('shopify-refunds-create.json').replaceAll(/"(created_at|processed_at)": "[^"]*"/g, `"$1": "${new Date().toISOString()}"`)

function post(topic: string, raw: string) {
  return app.request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'x-shopify-topic': topic, 'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(raw).digest('base64'),
      'x-shopify-webhook-id': crypto.randomUUID(), 'x-shopify-shop-domain': 'example-shop.myshopify.com',
    },
    body: raw,
  })
}
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const rows = (kind: string) => sql<{ provider: string, status: string, error: string | null }[]>(
  `select d.provider, d.status, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.order_id = ? and d.kind = ? order by d.provider`, [ORDER_ID, kind])

beforeAll(async () => {
  platforms = await startRefundPlatforms({ google: { scopes: [SCOPES.dataManager] } })
  google = platforms.google
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop', sources: { shopify: { secret: SECRET } },
      destinations: platforms.destinations,
    }],
  })
  url = `/api/v1/conversions/shopify/${app.dcgate.context.sites.byId('shop')!.copKey}`
})
afterAll(async () => {
  await app?.close()
  await platforms?.close()
})

describe('a Shopify refund of an order delivered to Google Ads and Meta', () => {
  it('reaches Google through events:ingest as a restatement of the value left; Meta\'s row says it is not supported; a retry sends nothing more', async () => {
    expect((await post('orders/paid', paidOrder())).status).toBe(200)
    await expect.poll(async () => (await rows('conversion')).map((d) => [d.provider, d.status]), { timeout: 15_000 }).toEqual([['google_ads', 'sent'], ['meta', 'sent']])

    const refund = refundNow()
    const response = await post('refunds/create', refund)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ refund: { order_id: ORDER_ID, outcome: 'applied' } })
    await expect.poll(() => google.restatements.length, { timeout: 15_000 }).toBe(1)
    const [sale, restatement] = google.ingests.filter((i) => i.status === 200).map((i) => i.body)
    expect(restatement!.destinations).toEqual(sale!.destinations)
    // The sale's event again with the value left; the browser's user agent and the address (fields kept in clear) were
    // erased once the sale was delivered, and Google keeps what it recorded (only the value and currency of a matched
    // event are updated); the hashed email and phone still identify it.
    const { landingPageDeviceInfo, ...clickIds } = sale!.events[0].adIdentifiers
    expect(landingPageDeviceInfo).toBeDefined()
    const identifiers = sale!.events[0].userData.userIdentifiers as Record<string, unknown>[]
    expect(identifiers.some((identifier) => 'address' in identifier)).toBe(true)
    const hashedOnly = identifiers.filter((identifier) => !('address' in identifier))
    expect(hashedOnly.length).toBeGreaterThan(0)
    expect(restatement!.events).toEqual([{ ...sale!.events[0], adIdentifiers: clickIds, userData: { ...sale!.events[0].userData, userIdentifiers: hashedOnly }, conversionValue: 160, currency: 'EUR' }])
    expect(google.restatements[0]).toMatchObject({
      orderId: `shopify-order-${ORDER_ID}`, conversionAction: 'customers/1234567890/conversionActions/111', from: { value: sale!.events[0].conversionValue, currency: 'EUR' },
    })
    // Google Ads keeps one conversion, now worth what is left; nothing went to the Google Ads API.
    expect(google.conversions.map((c) => [c.conversion.orderId, c.conversion.conversionValue])).toEqual([[`shopify-order-${ORDER_ID}`, 160]])
    expect(google.adjustmentUploads).toEqual([])
    await expect.poll(async () => (await rows('adjustment')).map((d) => [d.provider, d.status]), { timeout: 15_000 }).toEqual([['google_ads', 'sent'], ['meta', 'skipped']])
    expect((await rows('adjustment'))[1]!.error).toContain('not supported by Meta')

    expect(await (await post('refunds/create', refund)).json()).toMatchObject({ refund: { outcome: 'repeat' } })
    expect(await rows('adjustment')).toHaveLength(2)
    expect(google.restatements).toHaveLength(1)
  })
})

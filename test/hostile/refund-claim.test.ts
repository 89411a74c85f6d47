import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcilePendingRefunds } from '../../core/delivery/queries/pending-refunds.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

/**
 * Issue 25: a signed refund that arrives before its order waits; an unsigned body or a tracking-script Purchase
 * with the same order id (anyone can send one) must not take it, and the real order gets it when it arrives.
 */
const SECRET = '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'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
let app: TestApp
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const fixture = (name: string, orderId: string) =>
  readFileSync(new URL(`../sources/fixtures/${name}`, import.meta.url), 'utf8').replaceAll('820982911946154508', orderId)
const copKey = () => app.dcgate.context.sites.byId('shop')!.copKey

beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], sources: { shopify: { secret: SECRET }, zapier: {} } }],
  })
})
afterAll(async () => {
  await app?.close()
})

function postShopify(topic: string, raw: string) {
  return app.request(`/api/v1/conversions/shopify/${copKey()}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'x-shopify-topic': topic, 'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(raw).digest('base64'),
      'x-shopify-webhook-id': crypto.randomUUID(), 'x-shopify-shop-domain': 'example-shop.myshopify.com',
    },
    body: raw,
  })
}
/** What anyone who read the cop_key in a page can send: an unsigned Zapier body. */
async function postUnsignedZapier(orderId: string) {
  const response = await app.request(`/api/v1/conversions/zapier/${copKey()}`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'Purchase', messageId: `zap-${orderId}`, properties: { value: 1, currency: 'EUR', order_id: orderId } }),
  })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}
/** And a tracking-script Purchase naming the order. */
function collectPurchase(orderId: string) {
  return app.request(`/collect?cop_key=${copKey()}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1', origin: 'https://shop.example' },
    body: JSON.stringify({
      v: 1, sid: `sess-${orderId}`, vid: 'visitor-claim', consent: 'granted',
      hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/thanks', name: 'Purchase', id: `pixel-order-${orderId}`, props: { value: 1, currency: 'EUR', order_id: orderId } }],
    }),
  })
}
const rows = (orderId: string) => sql<{ trust: string, source: string, refund_ids: string[] | null }[]>(
  'select trust, source, refund_ids from conversions where site_id = ? and order_id = ? order by trust desc, source', ['shop', orderId])
const pending = (orderId: string) => sql<{ refund_id: string }[]>('select refund_id from pending_refunds where order_id = ?', [orderId])
const reconcile = () => {
  const { prepared, hooks, logger } = app.dcgate.context
  return reconcilePendingRefunds({ prepared, hooks, logger })
}

describe('a signed refund waiting for its order', () => {
  it('is not taken by an unsigned Zapier body or a tracking-script Purchase with its order id; the real order gets it', async () => {
    const order = '820982911946177001'
    const refund = await postShopify('refunds/create', fixture('shopify-refunds-create.json', order))
    expect(await refund.json()).toMatchObject({ refund: { order_id: order, outcome: 'pending_order' } })

    expect(await postUnsignedZapier(order)).toMatchObject({ status: 200, body: { accepted: true } })
    expect((await collectPurchase(order)).status).toBe(202)
    await expect.poll(async () => (await rows(order)).length).toBe(2)
    expect(await reconcile()).toMatchObject({ applied: 0 })
    expect(await rows(order)).toEqual([{ trust: 'public', source: 'pixel', refund_ids: null }, { trust: 'public', source: 'zapier', refund_ids: null }])
    expect(await pending(order)).toEqual([{ refund_id: 'refund-509562969' }])

    expect((await postShopify('orders/paid', fixture('shopify-orders-paid.json', order))).status).toBe(200)
    expect((await rows(order)).find((r) => r.trust === 'trusted')).toEqual({ trust: 'trusted', source: 'shopify', refund_ids: ['refund-509562969'] })
    expect(await pending(order)).toEqual([])
  })

  it('a signed refund of an order only public conversions name waits as pending_order, marking none of them', async () => {
    const order = '820982911946177002'
    expect(await postUnsignedZapier(order)).toMatchObject({ status: 200 })
    const refund = await postShopify('refunds/create', fixture('shopify-refunds-create.json', order))
    expect(await refund.json()).toMatchObject({ refund: { order_id: order, outcome: 'pending_order' } })
    expect(await rows(order)).toEqual([{ trust: 'public', source: 'zapier', refund_ids: null }])

    expect((await postShopify('orders/paid', fixture('shopify-orders-paid.json', order))).status).toBe(200)
    // The real order, and with it the public copy of the same order, as for any refund (docs/api/sources.md).
    expect((await rows(order)).map((r) => [r.trust, r.refund_ids])).toEqual([['trusted', ['refund-509562969']], ['public', ['refund-509562969']]])
  })
})

import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordRefund } from '../../core/delivery/queries/refunds.ts'
import type { RefundedConversion } from '../../core/hooks.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { getPage, insertConversions, sqlOf } from '../export/support.ts'

let app: TestApp
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

async function storeOrder(orderId: string, value: number | null, trust = 'trusted'): Promise<void> {
  await sql(`insert into conversions (id, site_id, message_id, trust, source, event, occurred_at, value, currency, order_id, channel, confirmation, state)
    values (gen_random_uuid(), 'demo', ?, ?, 'shopify', 'purchase', now(), ?, 'EUR', ?, 'web', 'payment_confirmed', 'accepted')`,
  [`order-${orderId}-${trust}`, trust, value, orderId])
}
const marks = (orderId: string) => sql<{ trust: string, refunded_at: Date | null, refunded_value: number | null, refund_ids: string[] | null }[]>(
  `select trust, refunded_at, refunded_value, refund_ids from conversions where order_id = ? order by trust desc`, [orderId])
const refund = (orderId: string, refundId: string, amount?: number, at = new Date('2026-11-20T10:00:00Z')) =>
  recordRefund(app.dcgate.context.prepared, 'demo', { orderId, refundId, amount, at }).then((recorded) => recorded.outcome)

let key: string
const SECRET = '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'
const fixture = (name: string) => readFileSync(new URL(`../sources/fixtures/${name}`, import.meta.url), 'utf8')

/** Posts a body as Shopify does: its topic, and base64 HMAC-SHA256 of the raw bytes with the app's secret. */
function postShopify(topic: string, raw: string) {
  return app.request(`/api/v1/conversions/shopify/${app.dcgate.context.sites.byId('demo')!.copKey}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'x-shopify-topic': topic, 'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(raw).digest('base64'),
      'x-shopify-webhook-id': crypto.randomUUID(), 'x-shopify-shop-domain': 'example-shop.myshopify.com',
    },
    body: raw,
  })
}
beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export', 'intake'], sites: [{ id: 'demo', name: 'Demo shop', sources: { shopify: { secret: SECRET } } }] })
  key = await app.createKey('demo')
})
const exported = async () => (await getPage(app, key, '/api/v1/export/conversions', {})).body.data as Record<string, unknown>[]
afterAll(async () => {
  await app?.close()
})

describe('recording a refund against the stored order', () => {
  it('a partial refund adds its amount and the first refund time; a retried refund id counts once', async () => {
    await storeOrder('1001', 100)
    expect(await refund('1001', 'r1', 30)).toBe('applied')
    expect(await refund('1001', 'r1', 30)).toBe('repeat')
    expect(await refund('1001', 'r2', 20, new Date('2026-11-21T10:00:00Z'))).toBe('applied')
    const [row] = await marks('1001')
    expect(row).toMatchObject({ refunded_value: 50, refund_ids: ['r1', 'r2'] })
    expect(new Date(row!.refunded_at!).toISOString()).toBe('2026-11-20T10:00:00.000Z')
  })

  it('a refund with no amount (a cancellation) refunds the whole value, and refunds never exceed it', async () => {
    await storeOrder('1002', 80)
    expect(await refund('1002', 'r1', 50)).toBe('applied')
    expect(await refund('1002', 'cancel')).toBe('applied')
    expect(await refund('1002', 'r3', 50)).toBe('applied')
    expect((await marks('1002'))[0]!.refunded_value).toBe(80)
  })

  it('the trusted purchase and a public copy of the same order are both marked', async () => {
    await storeOrder('1003', 60)
    await storeOrder('1003', 60, 'public')
    expect(await refund('1003', 'r1', 10)).toBe('applied')
    expect((await marks('1003')).map((r) => [r.trust, r.refunded_value])).toEqual([['trusted', 10], ['public', 10]])
  })

  it('an order the site never sent is reported unknown and nothing changes', async () => {
    expect(await refund('no-such-order', 'r1', 10)).toBe('unknown_order')
    expect(await sql('select 1 from conversions where refunded_at is not null and order_id = ?', ['no-such-order'])).toEqual([])
  })
})

describe('the export of a refunded order', () => {
  it('shows refunded: true and the first refund time, and keeps the value sold', async () => {
    const id = '00000000-0000-4000-8000-000000000501'
    await insertConversions(sqlOf(app), [{ id, siteId: 'demo', createdAt: '2026-11-01T00:00:00Z', orderId: 'E-501', deliveries: [['meta', 'sent']] }])
    expect((await exported()).find((r) => r.id === id)).toMatchObject({ refunded: false, refunded_at: null, value: 42.5 })
    await refund('E-501', 'r1', 10, new Date('2026-11-02T08:30:00.123Z'))
    expect((await exported()).find((r) => r.id === id)).toMatchObject({ refunded: true, refunded_at: '2026-11-02T08:30:00.123000Z', value: 42.5, refunded_value: 10 })
  })
})

describe('a Shopify refunds/create webhook', () => {
  it('turns the exported conversion refunded, counts a retry once, and answers 200 like the purchase webhooks', async () => {
    expect((await postShopify('orders/paid', fixture('shopify-orders-paid.json'))).status).toBe(200)
    // A platform's answer, as the worker would record it (this site has no destinations).
    await sql(`insert into deliveries (id, conversion_id, site_id, provider, status, attempts, http_status, sent_at, created_at, next_attempt_at, updated_at)
      select gen_random_uuid(), id, site_id, 'meta', 'sent', 1, 200, now(), '2026-11-21T07:30:05Z', now(), now() from conversions where message_id = 'shopify-order-820982911946154508'`)
    const row = async () => (await exported()).find((r) => r.order_id === '820982911946154508')
    expect(await row()).toMatchObject({ refunded: false, refunded_at: null, value: 249.99 })

    const refund = fixture('shopify-refunds-create.json')
    const response = await postShopify('refunds/create', refund)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ accepted: true, events: [], refund: { order_id: '820982911946154508', refund_id: 'refund-509562969', outcome: 'applied' } })
    expect(await row()).toMatchObject({ refunded: true, refunded_at: '2026-11-24T09:12:40.000000Z', value: 249.99 })

    const retried = await postShopify('refunds/create', refund)
    expect(retried.status).toBe(200)
    expect(await retried.json()).toMatchObject({ refund: { outcome: 'repeat' } })
    expect(await marks('820982911946154508')).toMatchObject([{ refunded_value: 89.99, refund_ids: ['refund-509562969'] }])
  })

  it('a refund signed with another secret answers 401 and marks nothing', async () => {
    const response = await app.request(`/api/v1/conversions/shopify/${app.dcgate.context.sites.byId('demo')!.copKey}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-shopify-topic': 'refunds/create', 'x-shopify-hmac-sha256': createHmac('sha256', 'other').update('x').digest('base64') },
      body: fixture('shopify-refunds-create.json').replace('509562969', '509562970'),
    })
    expect(response.status).toBe(401)
    expect((await marks('820982911946154508'))[0]!.refund_ids).toEqual(['refund-509562969'])
  })

  it('a refund of an order dcgate has not stored answers 200 with pending_order, and is applied when the order arrives', async () => {
    const response = await postShopify('refunds/create', fixture('shopify-refunds-create.json').replaceAll('820982911946154508', '820982911946150000'))
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ accepted: true, refund: { order_id: '820982911946150000', outcome: 'pending_order' } })
    expect(await postShopify('orders/paid', fixture('shopify-orders-paid.json').replaceAll('820982911946154508', '820982911946150000')).then((r) => r.status)).toBe(200)
    expect(await marks('820982911946150000')).toMatchObject([{ refunded_value: 89.99, refund_ids: ['refund-509562969'] }])
    expect(await sql('select 1 from pending_refunds where order_id = ?', ['820982911946150000'])).toEqual([])
  })
})

describe('the conversion:refunded hook', () => {
  it('is called once per applied refund with the conversions marked, not for a retry, and a failing listener changes no answer', async () => {
    const heard: RefundedConversion[] = []
    const { hooks } = app.dcgate.context
    const unhookHeard = hooks.hook('conversion:refunded', (refund) => void heard.push(refund))
    const unhookFailing = hooks.hook('conversion:refunded', () => { throw new Error('adjustment listener failed') })
    try {
      expect((await postShopify('orders/paid', fixture('shopify-orders-paid.json').replaceAll('820982911946154508', '820982911946150777'))).status).toBe(200)
      const ids = (await sql<{ id: string }[]>('select id::text as id from conversions where order_id = ?', ['820982911946150777'])).map((r) => r.id)
      const body = fixture('shopify-refunds-create.json').replaceAll('820982911946154508', '820982911946150777').replaceAll('509562969', '509562977')
      const first = await postShopify('refunds/create', body)
      expect(first.status).toBe(200)
      expect(await first.json()).toMatchObject({ refund: { outcome: 'applied' } })
      const retried = await postShopify('refunds/create', body)
      expect(await retried.json()).toMatchObject({ refund: { outcome: 'repeat' } })
      expect(heard).toHaveLength(1)
      expect(heard[0]).toMatchObject({ siteId: 'demo', orderId: '820982911946150777', refundId: 'refund-509562977', amount: 89.99 })
      expect(heard[0]!.conversionIds.sort()).toEqual(ids.sort())
    }
    finally {
      unhookHeard()
      unhookFailing()
    }
  })
})

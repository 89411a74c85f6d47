import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RefundedConversion } from '../../core/hooks.ts'
import { reconcilePendingRefunds } from '../../core/delivery/queries/pending-refunds.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { getPage } from '../export/support.ts'

/** Refund webhooks of WooCommerce, Stripe and the automation tools, end to end: signed body in, export out. */
let app: TestApp
let key: string
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const fixture = (name: string) => readFileSync(new URL(`../sources/fixtures/${name}`, import.meta.url), 'utf8')
const copKey = () => app.dcgate.context.sites.byId('demo')!.copKey

const WOO_SECRET = 'Xq4v9LkT2mWp8RzN6cYb3HfJ'
const MAKE_SECRET = 'make-7c1e9a4f2b8d6e3a'
const STRIPE_SECRET = 'whsec_2Yt7cVbN5mQw8ZpR4kXs9LdF3hJg6TaE'
/** The official client, only to sign bodies as Stripe does (it sends no request here). */
const stripe = new Stripe('sk_test_not_used')

beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export', 'intake'], sites: [{ id: 'demo', name: 'Demo shop', sources: { woocommerce: { secret: WOO_SECRET }, stripe: { signingSecret: STRIPE_SECRET }, make: { secret: MAKE_SECRET } } }] })
  key = await app.createKey('demo')
})
afterAll(async () => {
  await app?.close()
})

/** A platform's answer, as the worker would record it (this site has no destinations): the export lists sent conversions. */
async function markSent(orderId: string): Promise<void> {
  await sql(`insert into deliveries (id, conversion_id, site_id, provider, status, attempts, http_status, sent_at, created_at, next_attempt_at, updated_at)
    select gen_random_uuid(), id, site_id, 'meta', 'sent', 1, 200, now(), '2026-11-21T07:30:05Z', now(), now() from conversions where order_id = ? and site_id = 'demo'`, [orderId])
}
const exportedOrder = async (orderId: string) =>
  ((await getPage(app, key, '/api/v1/export/conversions', {})).body.data as Record<string, unknown>[]).find((r) => r.order_id === orderId)
const marks = (orderId: string) => sql<{ refunded_value: number | null, refund_ids: string[] | null }[]>(
  'select refunded_value, refund_ids from conversions where order_id = ?', [orderId])

/** Posts a body as WooCommerce's WC_Webhook::deliver does: topic headers and base64 HMAC-SHA256 of the raw bytes. */
function postWoo(raw: string, topic = 'order.updated', secret = WOO_SECRET) {
  return app.request(`/api/v1/conversions/woocommerce/${copKey()}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'user-agent': 'WooCommerce/9.4.2 Hookshot (WordPress/6.7.1)', 'x-wc-webhook-topic': topic,
      'x-wc-webhook-resource': 'order', 'x-wc-webhook-event': topic.split('.')[1]!, 'x-wc-webhook-id': '12', 'x-wc-webhook-delivery-id': crypto.randomUUID(),
      'x-wc-webhook-signature': createHmac('sha256', secret).update(raw).digest('base64'),
    },
    body: raw,
  })
}
const wooOrder = (changes: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(fixture('woocommerce-order-paid.json')) as object, ...changes })

describe('WooCommerce order.updated with refunds', () => {
  it('a partial refund turns the exported order refunded with its amount; a retry counts once; the refunded status takes the rest', async () => {
    expect((await postWoo(fixture('woocommerce-order-paid.json'), 'order.created')).status).toBe(200)
    await markSent('727')
    expect(await exportedOrder('727')).toMatchObject({ refunded: false, refunded_at: null, value: 29.35 })

    const partial = wooOrder({ date_modified_gmt: '2026-11-23T09:15:00', refunds: [{ id: 741, reason: 'One item damaged', total: '-10.00' }] })
    const response = await postWoo(partial)
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ accepted: true, refunds: [{ order_id: '727', refund_id: 'refund-741', outcome: 'applied' }] })
    // A partial refund: value stays the amount sold, refunded_value shows what went back.
    expect(await exportedOrder('727')).toMatchObject({ refunded: true, refunded_at: '2026-11-23T09:15:00.000000Z', value: 29.35, refunded_value: 10 })

    expect(await (await postWoo(partial)).json()).toMatchObject({ refunds: [{ refund_id: 'refund-741', outcome: 'repeat' }] })
    expect(await marks('727')).toEqual([{ refunded_value: 10, refund_ids: ['refund-741'] }])

    const refunded = wooOrder({ status: 'refunded', date_modified_gmt: '2026-11-24T10:00:00', refunds: [{ id: 742, reason: '', total: '-19.35' }, { id: 741, reason: 'One item damaged', total: '-10.00' }] })
    expect(await (await postWoo(refunded)).json()).toMatchObject({
      events: [], refunds: [{ refund_id: 'refund-742', outcome: 'applied' }, { refund_id: 'refund-741', outcome: 'repeat' }, { refund_id: 'status-refunded', outcome: 'applied' }],
    })
    expect(await marks('727')).toEqual([{ refunded_value: 29.35, refund_ids: ['refund-741', 'refund-742', 'status-refunded'] }])
    expect(await exportedOrder('727')).toMatchObject({ refunded: true, refunded_at: '2026-11-23T09:15:00.000000Z', refunded_value: 29.35 })
  })

  it('a refund signed with another secret answers 401 and records nothing', async () => {
    const response = await postWoo(wooOrder({ id: 727, refunds: [{ id: 799, reason: '', total: '-1.00' }] }), 'order.updated', 'not-the-shop-secret-at-all')
    expect(response.status).toBe(401)
    expect((await marks('727'))[0]!.refund_ids).not.toContain('refund-799')
  })

  it('hostile refunds entries get 422, never 500, and record nothing', async () => {
    // NUL is removed and a lone surrogate becomes U+FFFD before parsing (docs/api/errors.md): what is left is still refused.
    for (const refunds of [[{ id: 'x'.repeat(5000), total: '-1.00' }], [{ id: 750, total: '-1.00\u0000; drop table conversions' }], [{ id: 751, total: { $gt: 0 } }], [{ id: '\ud800', total: '-1.00' }], 'refunds']) {
      const response = await postWoo(wooOrder({ refunds }))
      expect(response.status).toBe(422)
      expect(await response.json()).toMatchObject({ code: 'INVALID_WEBHOOK' })
    }
    expect((await marks('727'))[0]!.refund_ids).toEqual(['refund-741', 'refund-742', 'status-refunded'])
  })
})

/** Posts a Stripe event with the Stripe-Signature header the official client computes (t=…,v1=…). */
function postStripe(raw: string, secret = STRIPE_SECRET) {
  return app.request(`/api/v1/conversions/stripe/${copKey()}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: raw, secret }) },
    body: raw,
  })
}

describe('Stripe refund.created and charge.refunded', () => {
  it('a refund of the Checkout payment turns the exported order refunded, linked by its PaymentIntent; a retry counts once; charge.refunded takes the rest', async () => {
    expect((await postStripe(fixture('stripe-checkout-session-completed.json'))).status).toBe(200)
    await markSent('A-1001')
    expect(await exportedOrder('A-1001')).toMatchObject({ refunded: false, refunded_at: null, refunded_value: null, value: 129.85 })

    const refund = fixture('stripe-refund-created.json')
    const response = await postStripe(refund)
    expect(response.status).toBe(200)
    // The refund names the PaymentIntent; the purchase was stored under the shop's order id from the session's metadata.
    expect(await response.json()).toMatchObject({ accepted: true, refund: { order_id: 'pi_3QNf2aLkdIwHu7ix0aBcDeF1', refund_id: 're_3QNf2aLkdIwHu7ix0GhT7Kp2', outcome: 'applied' } })
    expect(await exportedOrder('A-1001')).toMatchObject({ refunded: true, refunded_at: '2026-11-23T07:40:10.000000Z', value: 129.85, refunded_value: 40 })

    expect(await (await postStripe(refund)).json()).toMatchObject({ refund: { outcome: 'repeat' } })
    expect(await marks('A-1001')).toEqual([{ refunded_value: 40, refund_ids: ['re_3QNf2aLkdIwHu7ix0GhT7Kp2'] }])

    expect(await (await postStripe(fixture('stripe-charge-refunded.json'))).json()).toMatchObject({ refunds: [{ refund_id: 'charge-ch_3QNf2aLkdIwHu7ix0x8Zq2Lm-refunded', outcome: 'applied' }] })
    expect(await marks('A-1001')).toEqual([{ refunded_value: 129.85, refund_ids: ['re_3QNf2aLkdIwHu7ix0GhT7Kp2', 'charge-ch_3QNf2aLkdIwHu7ix0x8Zq2Lm-refunded'] }])
  })

  it('a refund signed with another secret, or not at all, answers 401 and records nothing', async () => {
    const other = fixture('stripe-refund-created.json').replaceAll('re_3QNf2aLkdIwHu7ix0GhT7Kp2', 're_3QNf2aLkdIwHu7ix0Other01')
    expect((await postStripe(other, 'whsec_someoneElsesSecret0000')).status).toBe(401)
    const unsigned = await app.request(`/api/v1/conversions/stripe/${copKey()}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: other })
    expect(unsigned.status).toBe(401)
    expect((await marks('A-1001'))[0]!.refund_ids).not.toContain('re_3QNf2aLkdIwHu7ix0Other01')
  })

  it('hostile refund bodies get 422, never 500', async () => {
    const refund = JSON.parse(fixture('stripe-refund-created.json')) as { data: { object: Record<string, unknown> } }
    for (const changes of [{ id: 'x'.repeat(10_000) }, { amount: '4000' }, { amount: 1e300 }, { currency: ['eur'] }, { payment_intent: 'pi_\ud800' }, { created: 'yesterday' }]) {
      const response = await postStripe(JSON.stringify({ ...refund, data: { object: { ...refund.data.object, ...changes } } }))
      expect(response.status).toBe(422)
      expect(await response.json()).toMatchObject({ code: 'INVALID_WEBHOOK' })
    }
  })
})

/** Posts to the Make source, signed as its README tells a scenario to: X-Dcgate-Signature sha256=<hex HMAC of the body>. */
function postMake(body: unknown, signed = true) {
  const raw = JSON.stringify(body)
  const signature: Record<string, string> = signed ? { 'x-dcgate-signature': `sha256=${createHmac('sha256', MAKE_SECRET).update(raw).digest('hex')}` } : {}
  return app.request(`/api/v1/conversions/make/${copKey()}`, { method: 'POST', headers: { 'content-type': 'application/json', ...signature }, body: raw })
}

describe('an automation refund event (Make)', () => {
  it('a signed Order Refunded marks the order sent before; a retry counts once; an unsigned one records nothing', async () => {
    const purchase = { event: 'Purchase', messageId: 'make-order-5001', properties: { value: 80, currency: 'EUR', order_id: '5001', confirmation: 'payment_confirmed' } }
    expect((await postMake(purchase)).status).toBe(200)
    await markSent('5001')
    const refund = { event: 'Order Refunded', properties: { order_id: '5001', refund_id: 'rf-5001-1', amount: 30, currency: 'EUR', refunded_at: '2026-11-24T09:30:00Z' } }

    const unsigned = await postMake(refund, false)
    expect(unsigned.status).toBe(200)
    expect(await unsigned.json()).toMatchObject({ accepted: false, ignored: 'a refund must be signed; nothing was recorded' })
    expect(await marks('5001')).toEqual([{ refunded_value: null, refund_ids: null }])

    expect(await (await postMake(refund)).json()).toMatchObject({ accepted: true, refund: { order_id: '5001', refund_id: 'rf-5001-1', outcome: 'applied' } })
    expect(await (await postMake(refund)).json()).toMatchObject({ refund: { outcome: 'repeat' } })
    expect(await marks('5001')).toEqual([{ refunded_value: 30, refund_ids: ['rf-5001-1'] }])
    expect(await exportedOrder('5001')).toMatchObject({ refunded: true, refunded_at: '2026-11-24T09:30:00.000000Z', value: 80 })
  })

  it('a refund body with hostile fields gets 422, never 500', async () => {
    for (const properties of [{ order_id: 'x'.repeat(100_000) }, { order_id: ['5001'] }, { order_id: '5001', amount: 1e400 }, { order_id: '5001', refunded_at: '2026-13-45T99:99:99Z' }, { order_id: '\u0000' }]) {
      const response = await postMake({ event: 'Refund', properties })
      expect(response.status).toBe(422)
    }
  })
})

describe('a refund before its order', () => {
  const heard: RefundedConversion[] = []
  let unhook: () => void
  beforeAll(() => {
    unhook = app.dcgate.context.hooks.hook('conversion:refunded', (refund) => void heard.push(refund))
  })
  afterAll(() => unhook())
  const pending = (orderId: string) => sql<{ refund_id: string }[]>('select refund_id from pending_refunds where order_id = ? order by refund_id', [orderId])

  it('WooCommerce: kept as pending_order, applied when the paid order arrives, retries counted once, the hook called once', async () => {
    const early = wooOrder({ id: 9001, status: 'refunded', date_modified_gmt: '2026-11-25T08:00:00', refunds: [{ id: 9101, reason: '', total: '-29.35' }] })
    const answer = await (await postWoo(early)).json()
    expect(answer).toMatchObject({ accepted: true, refunds: [{ order_id: '9001', refund_id: 'refund-9101', outcome: 'pending_order' }, { refund_id: 'status-refunded', outcome: 'pending_order' }] })
    await postWoo(early)
    expect(await pending('9001')).toEqual([{ refund_id: 'refund-9101' }, { refund_id: 'status-refunded' }])
    expect(await marks('9001')).toEqual([])

    expect((await postWoo(wooOrder({ id: 9001 }), 'order.created')).status).toBe(200)
    await markSent('9001')
    expect(await exportedOrder('9001')).toMatchObject({ refunded: true, refunded_at: '2026-11-25T08:00:00.000000Z', value: 29.35 })
    expect(await marks('9001')).toEqual([{ refunded_value: 29.35, refund_ids: expect.arrayContaining(['refund-9101', 'status-refunded']) }])
    expect(await pending('9001')).toEqual([])
    expect(heard.filter((r) => r.orderId === '9001').map((r) => r.refundId).sort()).toEqual(['refund-9101', 'status-refunded'])
  })

  it('Stripe: a refund.created before checkout.session.completed is applied through the PaymentIntent when the payment arrives', async () => {
    const intent = 'pi_3QNf2aLkdIwHu7ix0Early01'
    const refund = fixture('stripe-refund-created.json').replaceAll('pi_3QNf2aLkdIwHu7ix0aBcDeF1', intent).replaceAll('re_3QNf2aLkdIwHu7ix0GhT7Kp2', 're_3QNf2aLkdIwHu7ix0Early01')
    expect(await (await postStripe(refund)).json()).toMatchObject({ refund: { order_id: intent, outcome: 'pending_order' } })
    const session = fixture('stripe-checkout-session-completed.json').replaceAll('pi_3QNf2aLkdIwHu7ix0aBcDeF1', intent).replaceAll('"A-1001"', '"A-2002"')
    expect((await postStripe(session)).status).toBe(200)
    expect(await marks('A-2002')).toEqual([{ refunded_value: 40, refund_ids: ['re_3QNf2aLkdIwHu7ix0Early01'] }])
    expect(await pending(intent)).toEqual([])
  })

  it('the periodic turn applies a pending refund to an order stored through another route, and drops those older than 30 days', async () => {
    const keyed = await app.createKey('demo', 'automation-route')
    expect(await (await postMake({ event: 'Refund', properties: { order_id: '9301', refund_id: 'rf-9301', amount: 5 } })).json()).toMatchObject({ refund: { outcome: 'pending_order' } })
    const stored = await app.request('/api/v1/conversions/automation', {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': keyed },
      body: JSON.stringify({ event: 'Purchase', messageId: 'crm-9301', properties: { value: 50, currency: 'EUR', order_id: '9301' } }),
    })
    expect(stored.status).toBeLessThan(300)
    expect(await marks('9301')).toEqual([{ refunded_value: null, refund_ids: null }])

    await sql(`insert into pending_refunds (site_id, order_id, refund_id, refunded_at, created_at) values ('demo', 'never-9302', 'rf-old', now(), now() - interval '31 days'), ('demo', 'never-9303', 'rf-new', now(), now() - interval '29 days')`)
    const { prepared, hooks, logger } = app.dcgate.context
    expect(await reconcilePendingRefunds({ prepared, hooks, logger })).toEqual({ applied: 1, purged: 1 })
    expect(await marks('9301')).toEqual([{ refunded_value: 5, refund_ids: ['rf-9301'] }])
    expect(await sql('select order_id from pending_refunds where order_id in (?, ?, ?)', ['9301', 'never-9302', 'never-9303'])).toEqual([{ order_id: 'never-9303' }])
  })
})

describe('a refund event on POST /api/v1/conversions/automation (private key)', () => {
  const post = async (body: unknown) => {
    const response = await app.request('/api/v1/conversions/automation', { method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify(body) })
    return { status: response.status, body: await response.json() as Record<string, unknown> }
  }

  it('answers 202 with the refund, marks the order, counts a retry once (with or without refund_id)', async () => {
    expect((await post({ event: 'Purchase', messageId: 'crm-order-6001', properties: { value: 120, currency: 'EUR', order_id: '6001' } })).status).toBe(202)
    await markSent('6001')
    const refund = { event: 'Refund', properties: { order_id: '6001', amount: 20, currency: 'EUR', refunded_at: '2026-11-25T10:00:00Z' } }
    expect(await post(refund)).toMatchObject({ status: 202, body: { accepted: true, events: [], refund: { order_id: '6001', outcome: 'applied' } } })
    expect(await post(refund)).toMatchObject({ status: 202, body: { refund: { outcome: 'repeat' } } })
    expect(await post({ event: 'Order Cancelled', properties: { order_id: 6001 } })).toMatchObject({ body: { refund: { refund_id: 'cancelled', outcome: 'applied' } } })
    expect(await exportedOrder('6001')).toMatchObject({ refunded: true, refunded_at: '2026-11-25T10:00:00.000000Z', value: 120, refunded_value: 120 })
  })

  it('refuses a malformed refund with 422 INVALID_CONVERSION naming the field, never 500', async () => {
    for (const [properties, field] of [[{}, 'properties.order_id'], [{ order_id: '6001', amount: -3 }, 'properties.amount'], [{ order_id: '6001', refund_id: 'r'.repeat(300) }, 'properties.refund_id'], [{ order_id: '6001', refunded_at: 'soon' }, 'properties.refunded_at']] as const) {
      const answer = await post({ event: 'Order Refunded', properties })
      expect(answer.status).toBe(422)
      expect(answer.body).toMatchObject({ code: 'INVALID_CONVERSION', message: expect.stringContaining(field) })
    }
  })
})

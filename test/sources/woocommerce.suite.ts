import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as v from 'valibot'
import { SourceInputError } from '../../core/registry.ts'
import woocommerce, { type WooCommerceOptions } from '../../adapters/sources/woocommerce/index.ts'
import { conversionsOf, testIntakeSource } from '../contract/intake-source.ts'

const SECRET = 'Xq4v9LkT2mWp8RzN6cYb3HfJ'
const ORDER = readFileSync(new URL('fixtures/woocommerce-order-paid.json', import.meta.url), 'utf8')
/** A WooCommerce Subscriptions renewal order of subscription 728, paid automatically: created_via subscription, meta _subscription_renewal. */
const RENEWAL = readFileSync(new URL('fixtures/woocommerce-order-renewal.json', import.meta.url), 'utf8')
const HEADERS = {
  'Content-Type': 'application/json',
  'User-Agent': 'WooCommerce/9.4.2 Hookshot (WordPress/6.7.1)',
  'X-WC-Webhook-Source': 'https://shop.example.com/',
  'X-WC-Webhook-Topic': 'order.updated',
  'X-WC-Webhook-Resource': 'order',
  'X-WC-Webhook-Event': 'updated',
  'X-WC-Webhook-ID': '12',
  'X-WC-Webhook-Delivery-ID': '7bd81b5a0f3e41c9d0f0f6f1d9c1e2a4',
}
const PING = 'webhook_id=12'
const PING_HEADERS = { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': HEADERS['User-Agent'] }

/** What WC_Webhook::generate_signature sends: base64 HMAC-SHA256 of the body, keyed with the webhook's secret. */
function sign(raw: Uint8Array, options: WooCommerceOptions): Headers {
  return new Headers({ 'X-WC-Webhook-Signature': createHmac('sha256', options.secret).update(raw).digest('base64') })
}

const options = v.parse(woocommerce.options, { secret: SECRET })
const encode = (text: string) => new TextEncoder().encode(text)
const parse = (body: string, headers: Record<string, string> = HEADERS) => woocommerce.parse(encode(body), new Headers(headers), options)
const withOrder = (changes: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(ORDER) as object, ...changes })
const withMeta = (meta: { key: string, value: unknown }[]) => withOrder({ meta_data: meta.map((m, id) => ({ id, ...m })) })

testIntakeSource({
  source: woocommerce,
  folder: 'woocommerce',
  options: { secret: SECRET },
  otherOptions: { secret: 'a-different-webhook-secret' },
  invalidOptions: [
    { secret: 'short' }, { secret: SECRET, event: 7 }, { secret: SECRET, consumerSecret: 'cs_x' },
    { secret: SECRET, renewals: {} }, { secret: SECRET, renewals: { event: '' } }, { secret: SECRET, renewals: true }, { secret: SECRET, renewals: { event: 'Renewal', ignore: true } },
  ],
  sign,
  signatureHeader: 'X-WC-Webhook-Signature',
  fixtures: [{
    name: 'order.updated, processing and paid',
    body: ORDER,
    headers: HEADERS,
    expected: [{ messageId: 'woocommerce-order-727', event: 'Purchase', value: 29.35, currency: 'USD', orderId: '727' }],
    // The order.created delivery of the same order (a second webhook), under its own delivery id.
    redelivery: { headers: { 'X-WC-Webhook-Topic': 'order.created', 'X-WC-Webhook-Event': 'created', 'X-WC-Webhook-ID': '11', 'X-WC-Webhook-Delivery-ID': 'e1f0a2b3c4d5e6f708192a3b4c5d6e7f' } },
  }],
  ignored: [
    { name: 'the ping sent when the webhook is saved', body: PING, headers: PING_HEADERS, unsigned: true, reason: /^WooCommerce ping, sent when the webhook is saved$/ },
    { name: 'a WooCommerce Subscriptions renewal order, renewals not configured', body: RENEWAL, headers: HEADERS, reason: /^order 731 renews subscription 728 \(WooCommerce Subscriptions\): renewals are not recorded/ },
    { name: 'a pending order', body: withOrder({ status: 'pending', date_paid: null, date_paid_gmt: null }), headers: HEADERS, reason: /^order 727 is pending, not paid \(waiting for processing or completed\)$/ },
    { name: 'product.updated', body: '{"id":93,"name":"Woo Single #1"}', headers: { ...HEADERS, 'X-WC-Webhook-Topic': 'product.updated' }, reason: /topic product\.updated carries no payment; use order\.created or order\.updated/ },
  ],
  additionalTests: () => {
    describe('woocommerce: subscription renewals', () => {
      const withRenewals = v.parse(woocommerce.options, { secret: SECRET, renewals: { event: 'Renewal' } })
      const parseWith = (body: string, using = withRenewals) => woocommerce.parse(encode(body), new Headers({ ...HEADERS, ...Object.fromEntries(sign(encode(body), using)) }), using)
      const renewal = (changes: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(RENEWAL) as object, ...changes })

      it('a renewal order creates no Purchase; the first (parent) order does', () => {
        expect(woocommerce.verify(encode(RENEWAL), sign(encode(RENEWAL), options), options, new Date())).toBe(true)
        expect(parseWith(RENEWAL, options)).toMatchObject({ kind: 'ignored' })
        // Recognised by either mark WooCommerce Subscriptions leaves: the meta, or created_via alone.
        expect(parseWith(renewal({ meta_data: [] }), options)).toEqual({ kind: 'ignored', reason: expect.stringMatching(/^order 731 renews subscription \? /) })
        expect(parseWith(renewal({ created_via: 'checkout' }), options)).toEqual({ kind: 'ignored', reason: expect.stringMatching(/renews subscription 728/) })
        expect(conversionsOf(parseWith(ORDER, options))).toMatchObject([{ event: 'Purchase', messageId: 'woocommerce-order-727' }])
        expect(conversionsOf(parseWith(ORDER))).toMatchObject([{ event: 'Purchase' }])
      })

      it('records a paid renewal as the configured event, with the renewal order\'s own id, total and buyer', () => {
        expect(parseWith(RENEWAL)).toMatchObject({
          kind: 'conversions',
          sourceEventType: 'order.updated',
          conversions: [{
            messageId: 'woocommerce-order-731', event: 'Renewal', orderId: '731', value: 19, currency: 'USD',
            occurredAt: new Date('2026-12-21T12:28:09Z'),
            items: [{ sku: 'COFFEE-CLUB-M', product_id: '140', name: 'Coffee club – monthly', quantity: 1, price: 19 }],
            traits: { email: 'john.doe@example.com' },
            identifiers: { customer_id: '26' },
          }],
        })
        expect(conversionsOf(parseWith(RENEWAL))[0]).not.toHaveProperty('ip')
      })

      it('waits for a renewal to be paid, like any order (a failed automatic payment, a manual renewal)', () => {
        expect(parseWith(renewal({ status: 'pending', date_paid: null, date_paid_gmt: null }))).toEqual({ kind: 'ignored', reason: 'order 731 is pending, not paid (waiting for processing or completed)' })
        expect(parseWith(renewal({ status: 'failed', date_paid: null, date_paid_gmt: null }))).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('is failed') })
      })
    })

    describe('woocommerce: paid or not', () => {
      it('maps the paid order: total, currency, items, billing, IP, browser, click ids and customer id', () => {
        expect(conversionsOf(parse(ORDER))).toEqual([{
          messageId: 'woocommerce-order-727',
          event: 'Purchase',
          occurredAt: new Date('2026-11-21T12:28:08Z'),
          value: 29.35,
          currency: 'USD',
          orderId: '727',
          items: [
            { product_id: '93', name: 'Woo Single #1', quantity: 2, price: 3 },
            { sku: 'Bar3', product_id: '22', name: 'Ship Your Idea – Color: Black, Size: M Test', quantity: 1, price: 12 },
          ],
          channel: 'online',
          traits: {
            email: 'john.doe@example.com', phone: '(555) 555-5555', first_name: 'John', last_name: 'Doe',
            street: '969 Market', city: 'San Francisco', state: 'CA', postal_code: '94103', country: 'US',
          },
          identifiers: { fbclid: 'IwAR2xTq9ZlK8mVb3nQ', ttclid: 'E.C.P.Cq0BAAA', fbp: 'fb.1.1763700000000.1398745621', customer_id: '26' },
          ip: '198.51.100.23',
          userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
        }])
      })

      it('ignores orders that are not paid, each with its reason', () => {
        for (const status of ['pending', 'on-hold', 'failed', 'checkout-draft']) {
          expect(parse(withOrder({ status }))).toEqual({ kind: 'ignored', reason: `order 727 is ${status}, not paid (waiting for processing or completed)` })
        }
        expect(parse(withOrder({ date_paid: null, date_paid_gmt: null }))).toEqual({ kind: 'ignored', reason: 'order 727 is processing but has no date_paid yet' })
      })

      it('records a completed order, and the update that pays a pending order, under the same messageId', () => {
        expect(conversionsOf(parse(withOrder({ status: 'completed' })))[0]!.messageId).toBe('woocommerce-order-727')
        const created = parse(withOrder({ status: 'pending', date_paid: null, date_paid_gmt: null }), { ...HEADERS, 'X-WC-Webhook-Topic': 'order.created' })
        expect(created.kind).toBe('ignored')
        expect(conversionsOf(parse(ORDER))[0]!.messageId).toBe('woocommerce-order-727')
      })

      it('reads *_gmt times as UTC, falling back to the creation time', () => {
        expect(conversionsOf(parse(withOrder({ date_paid_gmt: '2026-11-21T23:59:59' })))[0]!.occurredAt).toEqual(new Date('2026-11-21T23:59:59Z'))
        expect(conversionsOf(parse(withOrder({ date_paid_gmt: null })))[0]!.occurredAt).toEqual(new Date('2026-11-21T12:28:02Z'))
      })

      it('treats customer 0 as a guest, and an empty IP or user agent as absent', () => {
        const guest = conversionsOf(parse(withOrder({ customer_id: 0, customer_ip_address: '', customer_user_agent: '' })))[0]!
        expect(guest.identifiers).not.toHaveProperty('customer_id')
        expect(guest).not.toHaveProperty('ip')
        expect(guest).not.toHaveProperty('userAgent')
      })

      it('reads click ids from meta_data keys and cookie names, over the order attribution landing page', () => {
        const ids = (meta: { key: string, value: unknown }[]) => conversionsOf(parse(withMeta(meta)))[0]!.identifiers
        expect(ids([
          { key: '_wc_order_attribution_session_entry', value: 'https://shop.example.com/?gclid=from-landing&msclkid=landing-ms' },
          { key: 'gclid', value: 'from-checkout-field' },
          { key: '_fbc', value: 'fb.1.1763710000000.IwAR' },
          { key: '_uetmsclkid', value: 'uet-cookie' },
          { key: 'ttclid', value: ['not', 'text'] },
          { key: '_billing_vat', value: 'GB123' },
        ])).toEqual({ gclid: 'from-checkout-field', msclkid: 'uet-cookie', fbc: 'fb.1.1763710000000.IwAR', customer_id: '26' })
      })
    })

    describe('woocommerce: refunds and cancellations', () => {
      const refundsOf = (body: string) => {
        const parsed = parse(body)
        if (parsed.kind !== 'conversions') throw new Error(`expected refunds, got ${parsed.kind}`)
        return parsed
      }
      const at = new Date('2026-11-21T12:28:08Z')

      it('reads each entry of refunds (WooCommerce lists them with a negative total) beside the paid order', () => {
        const parsed = refundsOf(withOrder({ refunds: [{ id: 731, reason: 'Damaged', total: '-10.00' }, { id: 733, reason: '', total: '-2.35' }] }))
        expect(parsed.conversions).toMatchObject([{ messageId: 'woocommerce-order-727', value: 29.35 }])
        expect(parsed.refunds).toEqual([
          { orderId: '727', refundId: 'refund-731', amount: 10, currency: 'USD', at },
          { orderId: '727', refundId: 'refund-733', amount: 2.35, currency: 'USD', at },
        ])
        expect(refundsOf(ORDER).refunds).toBeUndefined()
      })

      it('takes the whole order back when it is refunded, or cancelled after it was paid; a never-paid cancellation records nothing', () => {
        expect(refundsOf(withOrder({ status: 'refunded', refunds: [{ id: 740, reason: '', total: '-29.35' }] }))).toEqual({
          kind: 'conversions', conversions: [], sourceEventType: 'order.updated',
          refunds: [{ orderId: '727', refundId: 'refund-740', amount: 29.35, currency: 'USD', at }, { orderId: '727', refundId: 'status-refunded', at }],
        })
        expect(refundsOf(withOrder({ status: 'cancelled' })).refunds).toEqual([{ orderId: '727', refundId: 'status-cancelled', at }])
        expect(parse(withOrder({ status: 'cancelled', date_paid: null, date_paid_gmt: null }))).toEqual({ kind: 'ignored', reason: 'order 727 is cancelled and was never paid: nothing to take back' })
      })

      it('property: a refunds entry with any field replaced by arbitrary JSON, in any status, is read or refused, never thrown otherwise', () => {
        fc.assert(fc.property(fc.constantFrom('id', 'total', 'reason'), fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('processing', 'refunded', 'cancelled'), (key, value, status) => {
          try {
            expect(['conversions', 'ignored']).toContain(parse(withOrder({ status, refunds: [{ id: 731, reason: '', total: '-1.00', [key]: value }] })).kind)
          }
          catch (error) {
            expect(error).toBeInstanceOf(SourceInputError)
          }
        }), { numRuns: 200 })
      })

      it('refuses a refunds entry that is not one, naming it', () => {
        for (const refunds of [[{ id: 731 }], [{ id: 731, total: 'ten' }], ['731'], [{ id: 'x'.repeat(300), total: '-1.00' }], [{ id: null, total: '-1.00' }], { id: 731 }]) {
          expect(() => parse(withOrder({ refunds }))).toThrow(/refunds/)
        }
      })
    })

    describe('woocommerce: the ping and the headers', () => {
      it('lets the unsigned ping through verification and answers it ignored, so WooCommerce activates the webhook', () => {
        expect(woocommerce.verify(encode(PING), new Headers(PING_HEADERS), options, new Date())).toBe(true)
        expect(woocommerce.isSigned(new Headers(PING_HEADERS))).toBe(false)
        expect(parse(PING, PING_HEADERS)).toEqual({ kind: 'ignored', reason: 'WooCommerce ping, sent when the webhook is saved' })
      })

      it('lets nothing else through unsigned: not another form body, not a ping with a wrong signature', () => {
        for (const body of ['webhook_id=12&status=paid', 'webhook_id=', 'webhook_id=12\n', `webhook_id=${'9'.repeat(40)}`, '{"webhook_id":12}']) {
          expect(woocommerce.verify(encode(body), new Headers(PING_HEADERS), options, new Date()), body).toBe(false)
        }
        expect(woocommerce.verify(encode(PING), new Headers({ ...PING_HEADERS, 'X-WC-Webhook-Signature': 'bm90IGl0' }), options, new Date())).toBe(false)
      })

      it('refuses an order without X-WC-Webhook-Topic, naming the header, and one without an id', () => {
        const { 'X-WC-Webhook-Topic': _topic, ...noTopic } = HEADERS
        expect(() => parse(ORDER, noTopic)).toThrow('X-WC-Webhook-Topic header: is missing; WooCommerce sends it with every webhook')
        expect(() => parse(withOrder({ id: undefined }))).toThrow('id: is required')
        expect(() => parse(withOrder({ total: 'twenty' }))).toThrow('total: must be a decimal amount such as "29.35"')
        expect(() => parse(withOrder({ billing: 'John' }))).toThrow('billing: must be an object')
      })
    })
  },
})

import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as v from 'valibot'
import fc from 'fast-check'
import { SourceInputError } from '../../core/registry.ts'
import shopify, { type ShopifyOptions } from '../../adapters/sources/shopify/index.ts'
import { conversionsOf, testIntakeSource } from '../contract/intake-source.ts'

const SECRET = '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'
const ORDER = readFileSync(new URL('fixtures/shopify-orders-paid.json', import.meta.url), 'utf8')
const REFUND = readFileSync(new URL('fixtures/shopify-refunds-create.json', import.meta.url), 'utf8')
const HEADERS = {
  'Content-Type': 'application/json',
  'X-Shopify-Topic': 'orders/paid',
  'X-Shopify-Shop-Domain': 'example-shop.myshopify.com',
  'X-Shopify-API-Version': '2025-10',
  'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
  'X-Shopify-Event-Id': '98880550-7158-44d4-b7cd-2c97c8a091b5',
  'X-Shopify-Triggered-At': '2026-11-21T07:30:03.241Z',
}

/** What Shopify does: base64 HMAC-SHA256 of the raw body, keyed with the app's client secret. */
function sign(raw: Uint8Array, options: ShopifyOptions): Headers {
  return new Headers({ 'X-Shopify-Hmac-Sha256': createHmac('sha256', options.secret).update(raw).digest('base64') })
}

const options = v.parse(shopify.options, { secret: SECRET })
const parse = (body: string, headers: Record<string, string> = HEADERS, using: ShopifyOptions = options) => shopify.parse(new TextEncoder().encode(body), new Headers(headers), using)
const conversion = (body: string) => conversionsOf(parse(body))[0]!
/** The fixture with a top-level field replaced, as text, so its 64-bit ids keep every digit. */
const withField = (name: string, json: string) => ORDER.replace(new RegExp(`\\n  "${name}": [\\s\\S]*?,(?=\\n  "|\\n}$)`), `\n  "${name}": ${json},`)

testIntakeSource({
  source: shopify,
  folder: 'shopify',
  options: { secret: SECRET },
  otherOptions: { secret: 'shpss_00000000000000000000000000000000' },
  invalidOptions: [{ secret: 'short' }, { secret: 42 }, { secret: SECRET, event: '' }, { secret: SECRET, topic: 'orders/paid' }],
  sign,
  signatureHeader: 'X-Shopify-Hmac-Sha256',
  fixtures: [{
    name: 'orders/paid',
    body: ORDER,
    headers: HEADERS,
    expected: [{ messageId: 'shopify-order-820982911946154508', event: 'Purchase', value: 249.99, currency: 'EUR', orderId: '820982911946154508' }],
    // Shopify retries with the same payload; a second subscription delivers it again under another webhook id.
    redelivery: { headers: { 'X-Shopify-Webhook-Id': '0d3b2a5e-7f4c-4c1e-9a0b-5e1f2d3c4b5a', 'X-Shopify-Triggered-At': '2026-11-21T07:45:00.000Z' } },
  }],
  ignored: [
    { name: 'orders/create', body: ORDER, headers: { ...HEADERS, 'X-Shopify-Topic': 'orders/create' }, reason: /topic orders\/create carries no payment or refund; subscribe this URL to orders\/paid, refunds\/create and orders\/cancelled/ },
    { name: 'orders/updated, not refunded', body: ORDER, headers: { ...HEADERS, 'X-Shopify-Topic': 'orders/updated' }, reason: /the order update is not a full refund/ },
    { name: 'refunds/create returning no money', body: REFUND.replace('"status": "success"', '"status": "failure"'), headers: { ...HEADERS, 'X-Shopify-Topic': 'refunds/create' }, reason: /the refund returned no money/ },
    { name: 'a test order', body: withField('test', 'true'), headers: HEADERS, reason: /order 820982911946154508 is a test order/ },
  ],
  additionalTests: () => {
    describe('shopify: mapping an order', () => {
      it('maps the paid order: value and currency in shop money, items, buyer, IP, browser, click ids and customer id', () => {
        expect(conversion(ORDER)).toEqual({
          messageId: 'shopify-order-820982911946154508',
          event: 'Purchase',
          occurredAt: new Date('2026-11-21T07:30:02.000Z'),
          value: 249.99,
          currency: 'EUR',
          orderId: '820982911946154508',
          items: [
            { sku: 'SKU2006-001', product_id: '788032119674292922', name: 'Aviator sunglasses', quantity: 1, price: 89.99 },
            { sku: 'SKU2006-020', product_id: '788032119674292923', name: 'Mid-century lounger', quantity: 2, price: 77.5 },
          ],
          channel: 'online',
          traits: {
            email: 'ann.example@gmail.com', phone: '+44 20 7946 0958', first_name: 'Ann', last_name: 'Example-Smith',
            street: '12 Example Road', city: 'London', state: 'ENG', postal_code: 'SW1A 1AA', country: 'GB',
          },
          identifiers: {
            gclid: 'Cj0KCQiA2eKtBhDcARIsAEGTG40w8p', msclkid: '5f3c8a0e2b6d1c4f9a7e8b2d3c1a0f9e',
            fbc: 'fb.1.1763710000000.IwAR2xTq9ZlK8mVb3nQ', fbp: 'fb.1.1763700000000.1398745621', customer_id: '115310627314723954',
          },
          ip: '203.0.113.7',
          userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
          pageUrl: 'https://checkout.example-shop.com/',
        })
      })

      it('keeps every digit of 64-bit ids that JSON.parse would round', () => {
        expect(JSON.parse(ORDER).id).toBe(820982911946154500)
        const { messageId, orderId, identifiers, items } = conversion(ORDER)
        expect([messageId, orderId, identifiers?.customer_id, items?.[0]?.product_id]).toEqual(['shopify-order-820982911946154508', '820982911946154508', '115310627314723954', '788032119674292922'])
      })

      it('a second webhook for the same order (edited, other delivery) keeps the same messageId', () => {
        const later = withField('updated_at', '"2026-11-21T09:00:00+01:00"').replace('"current_total_price": "249.99"', '"current_total_price": "239.99"')
        expect(conversion(later).messageId).toBe(conversion(ORDER).messageId)
      })

      it('reads click ids from landing_site, relative or absolute; note_attributes win over it', () => {
        const ids = (landing: string, notes = '[]') => conversion(withField('note_attributes', notes).replace(/"landing_site": ".*?"/, `"landing_site": ${JSON.stringify(landing)}`)).identifiers
        expect(ids('/collections/sale?ttclid=E.C.P.v3Tk&rdt_cid=2891562735601827&epik=dj0yJnU9&twclid=2-7ux9&li_fat_id=a1b2&ScCid=9c1e')).toEqual({
          ttclid: 'E.C.P.v3Tk', rdt_cid: '2891562735601827', epik: 'dj0yJnU9', twclid: '2-7ux9', li_fat_id: 'a1b2', ScCid: '9c1e', customer_id: '115310627314723954',
        })
        expect(ids('https://example-shop.com/?gbraid=0AAAAA&wbraid=CjkKCQ&fbclid=IwAR0abc')).toMatchObject({ gbraid: '0AAAAA', wbraid: 'CjkKCQ', fbclid: 'IwAR0abc' })
        const notes = JSON.stringify([{ name: 'gclid', value: 'from-cart-script' }, { name: '_uetmsclkid', value: 'uet-cookie-id' }, { name: '_gcl_aw', value: 'GCL.1763700000.from-cookie' }, { name: 'colour', value: 'red' }])
        expect(ids('/?gclid=from-landing-page&msclkid=from-landing', notes)).toEqual({ gclid: 'from-cart-script', msclkid: 'uet-cookie-id', customer_id: '115310627314723954' })
        expect(ids('not a url ?? %%%', JSON.stringify([{ name: '_gcl_aw', value: 'GCL.1763700000.Cj0cookie' }]))).toEqual({ gclid: 'Cj0cookie', customer_id: '115310627314723954' })
      })

      it('records POS orders as in_store', () => {
        expect(conversion(withField('source_name', '"pos"')).channel).toBe('in_store')
      })

      it('falls back to the shipping address, the customer\'s names and client_details.browser_ip; drops an IP that is not one', () => {
        const order = JSON.parse(ORDER) as Record<string, unknown>
        const body = JSON.stringify({ ...order, id: '5150', billing_address: null, shipping_address: { first_name: null, city: 'Leeds', zip: 'LS1 4AP', country_code: 'GB', province_code: null }, browser_ip: 'unknown', email: null, contact_email: null, phone: null })
        const { traits, ip } = conversion(body)
        expect(traits).toEqual({ email: 'ann.example@gmail.com', first_name: 'Ann', last_name: 'Example-Smith', city: 'Leeds', postal_code: 'LS1 4AP', country: 'GB' })
        expect(ip).toBe('203.0.113.7')
        expect(conversion(body.replace(/"browser_ip":"203\.0\.113\.7"/, '"browser_ip":"999.1.1.1"')).ip).toBeUndefined()
      })

      it('records the order as the configured event key', () => {
        expect(conversion(ORDER).event).toBe('Purchase')
        const sale = v.parse(shopify.options, { secret: SECRET, event: 'shop_sale' })
        expect(conversionsOf(parse(ORDER, HEADERS, sale))[0]!.event).toBe('shop_sale')
      })
    })

    describe('shopify: refunds and cancellations', () => {
      const refundOf = (body: string, topic: string) => {
        const result = parse(body, { ...HEADERS, 'X-Shopify-Topic': topic })
        return result.kind === 'refund' ? result.refund : result
      }

      it('refunds/create: the order, the refund id and what its successful refund transactions returned', () => {
        expect(refundOf(REFUND, 'refunds/create')).toEqual({
          orderId: '820982911946154508', refundId: 'refund-509562969', amount: 89.99, currency: 'EUR', at: new Date('2026-11-24T09:12:40.000Z'),
        })
        const twoTransactions = REFUND.replace(/"transactions": \[\s*(\{[\s\S]*?\n    \})\s*\]/, (_all, one: string) => `"transactions": [${one}, ${one.replace('"amount": "89.99",', '"amount": "10.01",')}, ${one.replace('"kind": "refund"', '"kind": "sale"')}]`)
        expect(refundOf(twoTransactions, 'refunds/create')).toMatchObject({ amount: 100 })
      })

      it('orders/cancelled and orders/updated with financial_status refunded: the whole order', () => {
        const cancelled = withField('cancelled_at', '"2026-11-22T09:00:00+01:00"')
        expect(refundOf(cancelled, 'orders/cancelled')).toEqual({ orderId: '820982911946154508', refundId: 'cancelled', at: new Date('2026-11-22T08:00:00.000Z') })
        expect(refundOf(withField('financial_status', '"refunded"'), 'orders/updated')).toEqual({ orderId: '820982911946154508', refundId: 'financial_status-refunded', at: new Date('2026-11-21T07:30:03.000Z') })
      })

      it('property: a refund or cancellation with any field (or a transaction field) replaced by arbitrary JSON is read or refused, never thrown otherwise', () => {
        const refund = JSON.parse(REFUND) as Record<string, unknown> & { transactions: Record<string, unknown>[] }
        const order = JSON.parse(ORDER) as Record<string, unknown>
        const cases: [string, Record<string, unknown>, (copy: Record<string, unknown>) => Record<string, unknown>][] = [
          ['refunds/create', refund, (copy) => copy],
          ['refunds/create', refund.transactions[0]!, (copy) => ({ ...refund, transactions: [copy] })],
          ['orders/cancelled', order, (copy) => copy],
        ]
        for (const [topic, target, wrap] of cases) {
          fc.assert(fc.property(fc.constantFrom(...Object.keys(target)), fc.jsonValue({ maxDepth: 2 }), (key, value) => {
            const body = JSON.stringify(wrap({ ...target, [key]: value }))
            try {
              const result = parse(body, { ...HEADERS, 'X-Shopify-Topic': topic })
              expect(['refund', 'ignored']).toContain(result.kind)
            }
            catch (error) {
              expect(error).toBeInstanceOf(SourceInputError)
            }
          }), { numRuns: 200 })
        }
      })

      it('refuses a refund it cannot read, naming the field', () => {
        expect(() => refundOf(REFUND.replace('"amount": "89.99",\n      "currency"', '"amount": "lots",\n      "currency"'), 'refunds/create')).toThrow('transactions[0].amount: must be a decimal amount')
        expect(() => refundOf(REFUND.replace('"order_id": 820982911946154508,\n  "created_at"', '"order_id": null,\n  "created_at"'), 'refunds/create')).toThrow('order_id: is required')
      })
    })

    describe('shopify: deliveries and headers', () => {
      it('accepts the header names without X- that Shopify\'s newer event deliveries use', () => {
        const raw = new TextEncoder().encode(ORDER)
        const digest = sign(raw, options).get('X-Shopify-Hmac-Sha256')!
        const headers = new Headers({ 'Shopify-Topic': 'orders/paid', 'Shopify-Hmac-Sha256': digest })
        expect(shopify.verify(raw, headers, options, new Date())).toBe(true)
        expect(shopify.parse(raw, headers, options).kind).toBe('conversions')
      })

      it('refuses a body without X-Shopify-Topic, naming the header', () => {
        const { 'X-Shopify-Topic': _topic, ...noTopic } = HEADERS
        expect(() => parse(ORDER, noTopic)).toThrow(new SourceInputError('X-Shopify-Topic header: is missing; Shopify sends it with every webhook'))
      })

      it('refuses orders it cannot read, naming the field', () => {
        expect(() => parse(withField('id', 'null'))).toThrow('id: is required')
        expect(() => parse(withField('total_price', '"12,50"'))).toThrow('total_price: must be a decimal amount such as "29.35"')
        expect(() => parse(withField('currency', '"euro"'))).toThrow('currency: must be a 3-letter currency code')
        expect(() => parse(withField('processed_at', '"yesterday"'))).toThrow('processed_at: must be an ISO 8601 date and time')
        expect(() => parse(withField('line_items', '{"sku":"x"}'))).toThrow('line_items: must be an array')
        expect(() => parse(withField('note_attributes', '[7]'))).toThrow('note_attributes[0]: must be an object')
      })
    })
  },
})

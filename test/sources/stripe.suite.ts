import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as v from 'valibot'
import { SourceInputError } from '../../core/registry.ts'
import stripe, { type StripeOptions } from '../../adapters/sources/stripe/index.ts'
import { conversionsOf, testIntakeSource } from '../contract/intake-source.ts'
import { intentSucceeded, invoicePaymentPaid, sessionCompleted } from '../helpers/stripe-events.ts'

const SECRET = 'whsec_2Yt7cVbN5mQw8ZpR4kXs9LdF3hJg6TaE'
type Json = Record<string, unknown>
/** The event with fields of data.object changed. */
const withObject = (event: string, changes: Json) => {
  const parsed = JSON.parse(event) as { data: { object: Json } }
  return JSON.stringify({ ...parsed, data: { object: { ...parsed.data.object, ...changes } } })
}
const withType = (event: string, type: string) => JSON.stringify({ ...JSON.parse(event) as Json, type })
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')
const SESSION = fixture('stripe-checkout-session-completed.json')
const INTENT = fixture('stripe-payment-intent-succeeded.json')
const SUBSCRIPTION = fixture('stripe-checkout-session-subscription.json')
/** invoice.paid for the second month of SUBSCRIPTION's subscription (API version 2025-09-30.clover: parent.subscription_details). */
const RENEWAL = fixture('stripe-invoice-paid-renewal.json')
/** The same subscription's first invoice: billing_reason subscription_create. */
const FIRST_INVOICE = withObject(RENEWAL, { billing_reason: 'subscription_create' })
const HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' }
/** A few seconds after the fixtures' events were created, as a delivery arrives. */
const NOW = new Date('2026-11-21T07:30:09Z')

/** Stripe's scheme: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the whsec_… string>. */
function signature(raw: Uint8Array, secret: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000)
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(raw).digest('hex')}`
}
const sign = (raw: Uint8Array, options: StripeOptions, now: Date) => new Headers({ 'Stripe-Signature': signature(raw, options.signingSecret, now) })

const options = v.parse(stripe.options, { signingSecret: SECRET })
const encode = (text: string) => new TextEncoder().encode(text)
const parse = (body: string) => stripe.parse(encode(body), new Headers(HEADERS), options)
const conversion = (body: string) => conversionsOf(parse(body))[0]!

testIntakeSource({
  source: stripe,
  folder: 'stripe',
  options: { signingSecret: SECRET },
  otherOptions: { signingSecret: 'whsec_0000000000000000000000000000' },
  invalidOptions: [
    { signingSecret: 'sk_live_51H…' }, { signingSecret: 'whsec_' }, { signingSecret: SECRET, toleranceSeconds: 0 },
    { signingSecret: SECRET, toleranceSeconds: 2.5 }, { signingSecret: SECRET, toleranceSeconds: '300' }, { secret: SECRET },
    { signingSecret: SECRET, renewals: {} }, { signingSecret: SECRET, renewals: { event: ' ' } }, { signingSecret: SECRET, renewals: 'Renewal' },
    { signingSecret: SECRET, renewals: { event: 'Renewal', sendsAs: 'Purchase' } },
    { signingSecret: SECRET, waitSeconds: -1 }, { signingSecret: SECRET, waitSeconds: 2.5 }, { signingSecret: SECRET, waitSeconds: 86_401 }, { signingSecret: SECRET, waitSeconds: '300' },
  ],
  sign,
  signatureHeader: 'Stripe-Signature',
  now: NOW,
  fixtures: [
    {
      name: 'checkout.session.completed, paid',
      body: SESSION,
      headers: HEADERS,
      expected: [{ messageId: 'stripe-pi-pi_3QNf2aLkdIwHu7ix0aBcDeF1', event: 'Purchase', value: 129.85, currency: 'EUR', orderId: 'A-1001' }],
      // The same payment's payment_intent.succeeded: one payment, one conversion.
      redelivery: { body: INTENT },
    },
    {
      name: 'payment_intent.succeeded',
      body: INTENT,
      headers: HEADERS,
      expected: [{ messageId: 'stripe-pi-pi_3QNf2aLkdIwHu7ix0aBcDeF1', event: 'Purchase', value: 129.85, currency: 'EUR', orderId: 'pi_3QNf2aLkdIwHu7ix0aBcDeF1' }],
      // Resent from the Dashboard: the same event, signed again later.
      redelivery: { headers: { 'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks) resend' } },
    },
    {
      name: 'checkout.session.completed for a subscription (no PaymentIntent)',
      body: SUBSCRIPTION,
      headers: HEADERS,
      expected: [{ messageId: 'stripe-sub-sub_1QNg7sLkdIwHu7ixE3fJ0aZk', event: 'Purchase', value: 29, currency: 'USD', orderId: 'sub_1QNg7sLkdIwHu7ixE3fJ0aZk' }],
      // The subscription's first invoice is the same payment: one conversion, keyed by the subscription.
      redelivery: { body: FIRST_INVOICE },
    },
    {
      name: 'invoice.paid for a subscription\'s first invoice (subscription_create)',
      body: FIRST_INVOICE,
      headers: HEADERS,
      // The subscription's metadata snapshot names the first purchase's order id.
      expected: [{ messageId: 'stripe-sub-sub_1QNg7sLkdIwHu7ixE3fJ0aZk', event: 'Purchase', value: 29, currency: 'USD', orderId: 'A-2044' }],
      redelivery: { body: withType(FIRST_INVOICE, 'invoice.payment_succeeded') },
    },
  ],
  ignored: [
    { name: 'a session still unpaid (delayed payment method)', body: withObject(SESSION, { payment_status: 'unpaid' }), headers: HEADERS, reason: /is not paid yet; checkout\.session\.async_payment_succeeded follows/ },
    { name: 'a session with nothing to pay', body: withObject(SUBSCRIPTION, { payment_status: 'no_payment_required', amount_total: 0 }), headers: HEADERS, reason: /has payment_status no_payment_required: nothing was paid/ },
    { name: 'another event type', body: withType(INTENT, 'payment_intent.created'), headers: HEADERS, reason: /event type payment_intent\.created is not a payment/ },
    { name: 'a subscription renewal (invoice.paid, subscription_cycle), renewals not configured', body: RENEWAL, headers: HEADERS, reason: /^invoice in_1SbR4vLkdIwHu7ixT6nB3qLd renews subscription sub_1QNg7sLkdIwHu7ixE3fJ0aZk: renewals are not recorded/ },
    { name: 'an invoice neither first nor renewal of a subscription', body: withObject(RENEWAL, { billing_reason: 'manual' }), headers: HEADERS, reason: /has billing_reason manual: only a subscription's first invoice \(subscription_create\) and renewals \(subscription_cycle\) are read from invoices/ },
    { name: 'a trial\'s first invoice, nothing paid', body: withObject(FIRST_INVOICE, { amount_paid: 0 }), headers: HEADERS, reason: /starts subscription sub_1QNg7sLkdIwHu7ixE3fJ0aZk but nothing was paid/ },
    { name: 'the PaymentIntent of an invoice (API versions before 2025-03-31.basil name it)', body: withObject(INTENT, { invoice: 'in_1QNg7sLkdIwHu7ixYp2W9rTb' }), headers: HEADERS, reason: /pays invoice in_1QNg7sLkdIwHu7ixYp2W9rTb; the invoice, or its Checkout Session, is the conversion/ },
  ],
  additionalTests: () => {
    describe('stripe: refunds', () => {
      const REFUND = fixture('stripe-refund-created.json')
      const CHARGE = fixture('stripe-charge-refunded.json')
      const refunded = { orderId: 'pi_3QNf2aLkdIwHu7ix0aBcDeF1', messageId: 'stripe-pi-pi_3QNf2aLkdIwHu7ix0aBcDeF1' }

      it('reads refund.created by its re_ id, linked to the PaymentIntent the purchase is keyed by, amount in major units', () => {
        expect(parse(REFUND)).toEqual({
          kind: 'refund', sourceEventType: 'refund.created',
          refund: { ...refunded, refundId: 're_3QNf2aLkdIwHu7ix0GhT7Kp2', amount: 40, currency: 'EUR', at: new Date(1795419610 * 1000) },
        })
        // An expanded payment_intent, the shop's own order id in the refund's metadata, a zero-decimal currency.
        expect(parse(withObject(REFUND, { payment_intent: { id: 'pi_9', object: 'payment_intent' }, metadata: { order_id: 'A-1001' }, currency: 'jpy', amount: 1500 }))).toMatchObject({
          refund: { orderId: 'A-1001', messageId: 'stripe-pi-pi_9', amount: 1500, currency: 'JPY' },
        })
      })

      it('records nothing for a refund that returned no money, or one with no PaymentIntent to link', () => {
        for (const status of ['failed', 'canceled', 'requires_action']) {
          expect(parse(withObject(REFUND, { status }))).toEqual({ kind: 'ignored', reason: `refund re_3QNf2aLkdIwHu7ix0GhT7Kp2 is ${status}: no money was returned` })
        }
        expect(parse(withObject(REFUND, { status: 'pending' }))).toMatchObject({ kind: 'refund' })
        expect(parse(withObject(REFUND, { payment_intent: null }))).toMatchObject({ kind: 'ignored', reason: expect.stringMatching(/names no PaymentIntent/) })
      })

      it('reads charge.refunded: a fully refunded charge as the whole value, listed refunds by their re_ ids, a partial one without the list ignored', () => {
        expect(parse(CHARGE)).toEqual({
          kind: 'conversions', conversions: [], sourceEventType: 'charge.refunded',
          refunds: [{ ...refunded, refundId: 'charge-ch_3QNf2aLkdIwHu7ix0x8Zq2Lm-refunded', at: new Date(1795506020 * 1000) }],
        })
        const listed = { object: 'list', has_more: false, url: '/v1/charges/ch_3QNf2aLkdIwHu7ix0x8Zq2Lm/refunds', data: [JSON.parse(REFUND).data.object] }
        expect(parse(withObject(CHARGE, { refunded: false, amount_refunded: 4000, refunds: listed }))).toMatchObject({
          refunds: [{ refundId: 're_3QNf2aLkdIwHu7ix0GhT7Kp2', amount: 40 }],
        })
        expect(parse(withObject(CHARGE, { refunded: false, amount_refunded: 4000 }))).toEqual({
          kind: 'ignored', reason: 'charge ch_3QNf2aLkdIwHu7ix0x8Zq2Lm is partly refunded and its refunds are not listed: subscribe to refund.created, which brings each refund',
        })
      })

      it('property: a Refund or refunded Charge with any field replaced by arbitrary JSON is read or refused, never thrown otherwise', () => {
        for (const event of [REFUND, CHARGE]) {
          const object = (JSON.parse(event) as { data: { object: Json } }).data.object
          fc.assert(fc.property(fc.constantFrom(...Object.keys(object), 'refunds'), fc.jsonValue({ maxDepth: 3 }), (key, value) => {
            try {
              expect(['refund', 'conversions', 'ignored']).toContain(parse(withObject(event, { [key]: value })).kind)
            }
            catch (error) {
              expect(error).toBeInstanceOf(SourceInputError)
            }
          }), { numRuns: 200 })
        }
      })

      it('refuses a refund whose fields are not what Stripe sends, naming the field', () => {
        expect(() => parse(withObject(REFUND, { amount: '40.00' }))).toThrow(/data\.object\.amount/)
        expect(() => parse(withObject(REFUND, { amount: -1 }))).toThrow(/data\.object\.amount/)
        expect(() => parse(withObject(REFUND, { id: 'x'.repeat(300) }))).toThrow(/data\.object\.id/)
        expect(() => parse(withObject(REFUND, { currency: 7 }))).toThrow(/data\.object\.currency/)
        expect(() => parse(withObject(CHARGE, { refunds: { data: 'none' } }))).toThrow(/data\.object\.refunds\.data/)
      })
    })

    const raw = encode(SESSION)
    const verifyAt = (signedAt: Date, header = signature(raw, SECRET, signedAt), using = options) => stripe.verify(raw, new Headers({ 'Stripe-Signature': header }), using, NOW)
    const seconds = (n: number) => new Date(NOW.getTime() + n * 1000)

    describe('stripe: signature timestamps and schemes', () => {
      it('accepts a signature up to 300 s old or early, and refuses one second beyond, either way', () => {
        expect([verifyAt(seconds(-300)), verifyAt(seconds(300)), verifyAt(seconds(0))]).toEqual([true, true, true])
        expect([verifyAt(seconds(-301)), verifyAt(seconds(301)), verifyAt(seconds(-86_400))]).toEqual([false, false, false])
      })

      it('uses the configured tolerance', () => {
        const strict = v.parse(stripe.options, { signingSecret: SECRET, toleranceSeconds: 10 })
        expect(verifyAt(seconds(-10), undefined, strict)).toBe(true)
        expect(verifyAt(seconds(-11), undefined, strict)).toBe(false)
      })

      it('accepts the header when any v1 matches (a secret being rolled) and ignores v0 and unknown schemes', () => {
        const good = signature(raw, SECRET, NOW)
        const [t, v1] = good.split(',')
        const rolled = signature(raw, 'whsec_oldoldoldoldoldold', NOW).split(',')[1]
        expect(verifyAt(NOW, `${t},${rolled},${v1}`)).toBe(true)
        expect(verifyAt(NOW, `${t}, ${v1!.toUpperCase().replace('V1=', 'v1=')}`)).toBe(true)
        expect(verifyAt(NOW, `${t},v0=${v1!.slice(3)}`)).toBe(false)
        expect(verifyAt(NOW, `${t},v2=${v1!.slice(3)}`)).toBe(false)
        expect(verifyAt(NOW, `${t},${rolled}`)).toBe(false)
      })

      it('refuses a header without a timestamp, with a changed one, or malformed', () => {
        const good = signature(raw, SECRET, NOW)
        const [t, v1] = good.split(',') as [string, string]
        expect(verifyAt(NOW, v1)).toBe(false)
        expect(verifyAt(NOW, `t=${Number(t.slice(2)) + 1},${v1}`)).toBe(false)
        for (const header of [`t=abc,${v1}`, `t=-5,${v1}`, 't=,v1=', ',,,', 'v1', `${v1},${t}x`, `t=${'9'.repeat(40)},${v1}`]) expect(verifyAt(NOW, header), header).toBe(false)
      })

      it('keys the HMAC with the whole whsec_… string, prefix included', () => {
        const t = Math.floor(NOW.getTime() / 1000)
        const withoutPrefix = `t=${t},v1=${createHmac('sha256', SECRET.slice('whsec_'.length)).update(`${t}.`).update(raw).digest('hex')}`
        expect(verifyAt(NOW, withoutPrefix)).toBe(false)
      })
    })

    describe('stripe: amounts and currencies', () => {
      const valueOf = (amount: number, currency: string) => {
        const { value, currency: code } = conversion(withObject(SESSION, { amount_total: amount, currency }))
        return [value, code]
      }

      it('turns minor units into major units: two decimals by default', () => {
        expect(valueOf(12985, 'eur')).toEqual([129.85, 'EUR'])
        expect(valueOf(1, 'usd')).toEqual([0.01, 'USD'])
        expect(valueOf(0, 'gbp')).toEqual([0, 'GBP'])
      })

      it('takes zero-decimal currencies as they are (JPY, KRW, VND, CLP, XOF…)', () => {
        expect(valueOf(1999, 'jpy')).toEqual([1999, 'JPY'])
        expect(valueOf(55000, 'krw')).toEqual([55000, 'KRW'])
        for (const code of ['bif', 'clp', 'djf', 'gnf', 'kmf', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']) expect(valueOf(500, code)[0], code).toBe(500)
      })

      it('divides three-decimal currencies (BHD, JOD, KWD, OMR, TND) by 1000', () => {
        expect(valueOf(12340, 'kwd')).toEqual([12.34, 'KWD'])
        expect(valueOf(5120, 'bhd')).toEqual([5.12, 'BHD'])
        for (const code of ['jod', 'omr', 'tnd']) expect(valueOf(1000, code)[0], code).toBe(1)
      })

      it('keeps ISK, HUF and TWD two-decimal, as Stripe\'s API does', () => {
        expect(valueOf(50000, 'isk')).toEqual([500, 'ISK'])
        expect(valueOf(100, 'huf')).toEqual([1, 'HUF'])
        expect(valueOf(39900, 'twd')).toEqual([399, 'TWD'])
      })

      it('reads amount_received from a PaymentIntent, and refuses amounts that are not whole minor units', () => {
        expect(conversion(withObject(INTENT, { amount_received: 700, amount: 1000, currency: 'jpy' })).value).toBe(700)
        expect(() => parse(withObject(SESSION, { amount_total: 129.85 }))).toThrow('data.object.amount_total: must be a whole number of minor units (cents), 0 or more')
        expect(() => parse(withObject(SESSION, { amount_total: -5 }))).toThrow('data.object.amount_total')
        expect(() => parse(withObject(INTENT, { amount_received: '700' }))).toThrow('data.object.amount_received')
        expect(() => parse(withObject(SESSION, { currency: null }))).toThrow('data.object.currency: is required with an amount')
      })
    })

    describe('stripe: which event is the conversion (withdrawals and waits)', () => {
      const ids = { subscription: 'sub_W1', invoice: 'in_W1', intent: 'pi_W1', session: 'cs_W1' }
      const parseBody = (body: unknown, using = options) => stripe.parse(encode(JSON.stringify(body)), new Headers(HEADERS), using)

      it('invoice_payment.paid withdraws the PaymentIntent that paid the invoice, and carries no conversion', () => {
        expect(parseBody(invoicePaymentPaid(ids))).toEqual({
          kind: 'conversions', conversions: [], sourceEventType: 'invoice_payment.paid',
          withdrawals: [{ messageId: 'stripe-pi-pi_W1', eventTypes: ['payment_intent.succeeded'], reason: 'PaymentIntent pi_W1 paid invoice in_W1 (invoice payment inpay_W1); the invoice, or its Checkout Session, is the conversion' }],
        })
        // Expanded invoice and payment_intent; an invoice paid out of band or by a bare charge has no PaymentIntent.
        const expanded = invoicePaymentPaid(ids) as unknown as { data: { object: Json & { payment: Json } } }
        const object = expanded.data.object
        expect(parseBody({ ...expanded, data: { object: { ...object, invoice: { id: 'in_W1' }, payment: { type: 'payment_intent', payment_intent: { id: 'pi_W2' } } } } })).toMatchObject({ withdrawals: [{ messageId: 'stripe-pi-pi_W2' }] })
        expect(parseBody({ ...expanded, data: { object: { ...object, payment: { type: 'payment_record', payment_record: 'pr_1' } } } })).toEqual({
          kind: 'ignored', reason: 'invoice payment inpay_W1 of invoice in_W1 was not made by a PaymentIntent (payment.type payment_record): nothing to withdraw',
        })
      })

      it('a PaymentIntent waits the configured time on API versions since basil (and without api_version), not before', () => {
        const waits = (body: unknown, using = options) => conversionsOf(parseBody(body, using))[0]!.awaitsWithdrawalSeconds
        expect(waits(intentSucceeded(ids))).toBe(300)
        expect(waits(intentSucceeded(ids, { apiVersion: '2025-03-31.basil' }))).toBe(300)
        expect(waits({ ...intentSucceeded(ids), api_version: null })).toBe(300)
        expect(waits(intentSucceeded(ids, { apiVersion: '2025-02-24.acacia', invoice: null }))).toBeUndefined()
        expect(waits(intentSucceeded(ids), v.parse(stripe.options, { signingSecret: SECRET, waitSeconds: 0 }))).toBe(0)
        expect(waits(intentSucceeded(ids), v.parse(stripe.options, { signingSecret: SECRET, waitSeconds: 45 }))).toBe(45)
      })

      it('property: an InvoicePayment, a first invoice or a PaymentIntent with any field replaced by arbitrary JSON is read or refused, never thrown otherwise', () => {
        for (const event of [JSON.stringify(invoicePaymentPaid(ids)), FIRST_INVOICE, JSON.stringify(intentSucceeded(ids))]) {
          const object = (JSON.parse(event) as { data: { object: Json } }).data.object
          fc.assert(fc.property(fc.constantFrom(...Object.keys(object), 'parent', 'subscription'), fc.jsonValue({ maxDepth: 3 }), (key, value) => {
            try {
              expect(['conversions', 'ignored']).toContain(parse(withObject(event, { [key]: value })).kind)
            }
            catch (error) {
              expect(error).toBeInstanceOf(SourceInputError)
            }
          }), { numRuns: 150 })
        }
      })

      it('a paid Checkout Session replaces the waiting copy of its payment: its PaymentIntent\'s, or its subscription\'s first invoice\'s', () => {
        expect(parseBody(sessionCompleted(ids, 'payment'))).toMatchObject({
          withdrawals: [{ messageId: 'stripe-pi-pi_W1', eventTypes: ['payment_intent.succeeded'], reason: 'replaced by checkout session cs_W1, the same payment' }], conversions: [{ messageId: 'stripe-pi-pi_W1' }],
        })
        expect(parseBody(sessionCompleted(ids, 'subscription'))).toMatchObject({
          withdrawals: [{ messageId: 'stripe-sub-sub_W1', eventTypes: ['invoice.paid', 'invoice.payment_succeeded'] }], conversions: [{ messageId: 'stripe-sub-sub_W1', identifiers: { customer_id: 'CRM-4410' } }],
        })
        expect(conversionsOf(parseBody(sessionCompleted(ids, 'payment')))[0]!.awaitsWithdrawalSeconds).toBeUndefined()
      })
    })

    describe('stripe: subscription renewals', () => {
      const withRenewals = v.parse(stripe.options, { signingSecret: SECRET, renewals: { event: 'Renewal' } })
      const parseWith = (body: string, using = withRenewals) => stripe.parse(encode(body), sign(encode(body), using, NOW), using)
      const purchases = (body: string, using = options) => conversionsOf(parseWith(body, using)).filter((c) => c.event === 'Purchase')

      it('a renewal invoice creates no Purchase; the first payment does', () => {
        expect(stripe.verify(encode(RENEWAL), sign(encode(RENEWAL), options, NOW), options, NOW)).toBe(true)
        for (const type of ['invoice.paid', 'invoice.payment_succeeded']) expect(purchases(withType(RENEWAL, type)), type).toEqual([])
        expect(purchases(SUBSCRIPTION)).toHaveLength(1)
        // Configured to record renewals, they are their own event, never a Purchase; the first payment stays one.
        expect(purchases(RENEWAL, withRenewals)).toEqual([])
        expect(purchases(SUBSCRIPTION, withRenewals)).toHaveLength(1)
        // The first invoice is the first payment: the same Purchase as the session (one messageId), waiting for it.
        expect(purchases(FIRST_INVOICE, withRenewals)).toMatchObject([{ messageId: conversion(SUBSCRIPTION).messageId, awaitsWithdrawalSeconds: 300 }])
      })

      it('records a renewal as the configured event, keyed by the invoice, with the renewal\'s own order id', () => {
        expect(parseWith(RENEWAL)).toEqual({
          kind: 'conversions',
          sourceEventType: 'invoice.paid',
          conversions: [{
            messageId: 'stripe-in-in_1SbR4vLkdIwHu7ixT6nB3qLd',
            event: 'Renewal',
            occurredAt: new Date('2026-11-21T07:30:06Z'),
            value: 29,
            currency: 'USD',
            // Not the subscription's order_id (A-2044, the first purchase): Google Ads would drop it as a duplicate.
            orderId: 'in_1SbR4vLkdIwHu7ixT6nB3qLd',
            channel: 'online',
            traits: { email: 'pat.builder@example.com', first_name: 'Pat', last_name: 'Builder', street: '500 Congress Ave', city: 'Austin', state: 'TX', postal_code: '78701', country: 'US' },
            identifiers: { gclid: 'Cj0KCQiA7rTrBhD3ARIsAJ8eQ1', customer_id: 'CRM-User-9120' },
          }],
        })
        // invoice.payment_succeeded about the same invoice is the same renewal.
        expect(conversionsOf(parseWith(withType(RENEWAL, 'invoice.payment_succeeded')))[0]!.messageId).toBe('stripe-in-in_1SbR4vLkdIwHu7ixT6nB3qLd')
      })

      it('reads endpoints on API versions before 2025-03-31.basil (subscription and subscription_details on the invoice)', () => {
        const parsed = JSON.parse(RENEWAL) as { api_version: string, data: { object: Json & { parent: { subscription_details: Json } } } }
        const { parent, ...rest } = parsed.data.object
        const legacy = JSON.stringify({ ...parsed, api_version: '2024-06-20', data: { object: { ...rest, subscription: parent.subscription_details.subscription, subscription_details: { metadata: parent.subscription_details.metadata }, paid: true, payment_intent: 'pi_3SbR4wLkdIwHu7ix1cR9vX2a' } } })
        expect(parseWith(legacy, options)).toEqual({ kind: 'ignored', reason: expect.stringMatching(/renews subscription sub_1QNg7sLkdIwHu7ixE3fJ0aZk: renewals are not recorded/) })
        expect(conversionsOf(parseWith(legacy))[0]).toMatchObject({ messageId: 'stripe-in-in_1SbR4vLkdIwHu7ixT6nB3qLd', event: 'Renewal', identifiers: { customer_id: 'CRM-User-9120' } })
      })

      it('ignores a renewal that paid nothing, and refuses one it cannot read', () => {
        expect(parseWith(withObject(RENEWAL, { amount_paid: 0 }))).toEqual({ kind: 'ignored', reason: expect.stringMatching(/but nothing was paid \(amount_paid 0\)/) })
        expect(() => parseWith(withObject(RENEWAL, { amount_paid: 29.0001 }))).toThrow('data.object.amount_paid: must be a whole number of minor units')
        expect(() => parseWith(withObject(RENEWAL, { id: null }))).toThrow('data.object.id: is required')
      })
    })

    describe('stripe: mapping', () => {
      it('maps a paid Checkout Session: customer details, client_reference_id, metadata click ids and order id', () => {
        expect(conversion(SESSION)).toEqual({
          messageId: 'stripe-pi-pi_3QNf2aLkdIwHu7ix0aBcDeF1',
          event: 'Purchase',
          occurredAt: new Date('2026-11-21T07:30:03Z'),
          value: 129.85,
          currency: 'EUR',
          orderId: 'A-1001',
          channel: 'online',
          traits: {
            email: 'marguerite.okonkwo@gmail.com', phone: '+16505550100', first_name: 'Marguerite', last_name: 'Okonkwo-Lindqvist',
            street: '1 Hacker Way', city: 'Menlo Park', state: 'CA', postal_code: '94025-1234', country: 'US',
          },
          identifiers: { gclid: 'Cj0KCQiA2eKtBhDcARIsAEGTG40w8p', fbc: 'fb.1.1795245000000.IwAR2xTq9ZlK8mVb3nQ', dc_session_id: 's_5u2x1q9k', customer_id: 'CRM-User-8812' },
        })
      })

      it('records checkout.session.async_payment_succeeded like a paid session, with the same messageId', () => {
        const later = withType(withObject(SESSION, { payment_status: 'paid' }), 'checkout.session.async_payment_succeeded')
        expect(parse(later)).toMatchObject({ kind: 'conversions', sourceEventType: 'checkout.session.async_payment_succeeded', conversions: [{ messageId: 'stripe-pi-pi_3QNf2aLkdIwHu7ix0aBcDeF1' }] })
      })

      it('reads an expanded payment_intent object on the session', () => {
        expect(conversion(withObject(SESSION, { payment_intent: { id: 'pi_expanded123', object: 'payment_intent' } })).messageId).toBe('stripe-pi-pi_expanded123')
      })

      it('keys a subscription session by its subscription, as its first invoice is, since it has no PaymentIntent', () => {
        expect(conversion(SUBSCRIPTION)).toMatchObject({ messageId: 'stripe-sub-sub_1QNg7sLkdIwHu7ixE3fJ0aZk', value: 29, identifiers: { customer_id: 'CRM-User-9120' } })
        // A paid session with neither (none Stripe documents) falls back to the session id.
        expect(conversion(withObject(SUBSCRIPTION, { subscription: null })).messageId).toMatch(/^stripe-cs-cs_live_/)
      })

      it('reads a PaymentIntent\'s receipt email, embedded charge billing details, shipping and metadata', () => {
        const legacy = withObject(INTENT, {
          receipt_email: null,
          metadata: { customer_id: 'CRM-7', order_id: 'SO-88', msclkid: 'ms-1' },
          charges: { object: 'list', data: [{ id: 'ch_1', billing_details: { email: 'bill@example.com', name: 'Bo Li', phone: null, address: { city: 'Oslo', country: 'NO', line1: null, postal_code: '0150', state: null } } }] },
          shipping: { name: 'Ship Name', phone: '+4722334455', address: { city: 'Bergen', country: 'NO' } },
        })
        expect(conversion(legacy)).toMatchObject({
          orderId: 'SO-88',
          traits: { email: 'bill@example.com', phone: '+4722334455', first_name: 'Bo', last_name: 'Li', city: 'Oslo', postal_code: '0150', country: 'NO' },
          identifiers: { msclkid: 'ms-1', customer_id: 'CRM-7' },
        })
      })

      it('refuses events it cannot read, naming the field', () => {
        expect(() => parse('{"id":"evt_1","object":"event","type":"checkout.session.completed"}')).toThrow('data.object: is required')
        expect(() => parse(withObject(SESSION, { id: null }))).toThrow('data.object.id: is required')
        expect(() => parse(JSON.stringify({ ...JSON.parse(SESSION) as Json, created: '2026-11-21' }))).toThrow('created: must be unix seconds')
        expect(() => parse(withObject(SESSION, { metadata: ['gclid'] }))).toThrow('data.object.metadata: must be an object')
      })
    })
  },
})

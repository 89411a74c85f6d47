import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { sharedDatabase } from '../helpers/database.ts'
import { purgeWaits } from '../../core/delivery/queries/waits.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import {
  intentSucceeded, invoicePaid, invoicePaymentPaid, legacyInvoicePaid, permutations, sessionCompleted,
  type PaymentIds, type StripeWebhookBody,
} from '../helpers/stripe-events.ts'

// Stripe does not deliver a payment's webhooks in order, and since API version 2025-03-31.basil a PaymentIntent no
// longer names the invoice it pays (README of adapters/sources/stripe). Every order of every payment's events must
// reach the platforms as Stripe counts it: a subscription's first payment once, a renewal never, a one-time payment once.
const SECRET = 'whsec_8Lk2Vq7Tz4Nw9Rb3Xc6Hm1Jp5Fs0Dg2Y'
/** The sites' sources.stripe.waitSeconds: longer than any order of posts takes here; the tests end it themselves (afterTheWait). */
const WAIT_SECONDS = 120
/** Endpoints created before basil receive this version's bodies. */
const OLD_VERSION = '2024-06-20'
/** The official client, only to sign bodies as Stripe does (it sends no request here). */
const stripe = new Stripe('sk_test_not_used')

let app: TestApp
let meta: FakeMeta

function siteConfig(fake: FakeMeta) {
  return {
    id: 'shop', name: 'Shop', domains: ['shop.example.com'],
    sources: { stripe: { signingSecret: SECRET, waitSeconds: WAIT_SECONDS } },
    destinations: { meta: { pixelId: fake.pixelId, accessToken: fake.accessToken, baseUrl: fake.url } },
  }
}
const DELIVERY = { workerIntervalMs: 25, retryBaseMs: 40, retryMaxMs: 200 }

beforeAll(async () => {
  meta = await startFakeMeta()
  app = await bootTestApp({ plugins: ['intake'], delivery: DELIVERY, sites: [siteConfig(meta)] })
})
afterAll(async () => {
  await app?.close()
  await meta?.close()
})

/** Posts a body signed as Stripe signs it; every delivery is answered 200. */
async function post(body: StripeWebhookBody, to: TestApp = app): Promise<Record<string, unknown>> {
  const payload = JSON.stringify(body)
  const copKey = to.dcgate.context.sites.byId('shop')!.copKey
  const response = await to.request(`/api/v1/conversions/stripe/${copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
    body: payload,
  })
  expect(response.status, await response.clone().text()).toBe(200)
  return await response.json() as Record<string, unknown>
}
const idsOf = (tag: string): PaymentIds => ({ subscription: `sub_${tag}`, invoice: `in_${tag}`, intent: `pi_${tag}`, session: `cs_${tag}` })
const sentToMeta = (messageId: string) => meta.events.filter((e) => e.event_id === messageId).length
const sql = <T extends object[]>(text: string, params: unknown[] = [], on: TestApp = app) => on.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const stored = (messageIds: string[]) => sql<{ message_id: string, source_event_type: string, order_id: string }[]>(
  'select message_id, source_event_type, order_id from conversions where site_id = ? and message_id = any(?::text[])', ['shop', `{${messageIds.join(',')}}`])

/** Posts each order of events, the orders at once and each order's events one after another. */
async function postEveryOrder(tag: string, events: (ids: PaymentIds) => StripeWebhookBody[]): Promise<PaymentIds[]> {
  const orders = permutations(events(idsOf('template')).map((_, i) => i))
  return Promise.all(orders.map(async (order, n) => {
    const ids = idsOf(`${tag}${n}`)
    const bodies = events(ids)
    for (const i of order) await post(bodies[i]!)
    return ids
  }))
}

/**
 * Ends every wait now, as the clock does `waitSeconds` after each conversion arrived (rows not yet attempted become
 * due), then waits until every outbox row of the site has ended: whatever the platforms will get, they have.
 */
async function afterTheWait(expectedAtMeta: string[], on: TestApp = app): Promise<void> {
  await sql(`update deliveries set next_attempt_at = now() where site_id = 'shop' and status = 'pending' and attempts = 0 and next_attempt_at > now()`, [], on)
  await vi.waitFor(async () => {
    for (const id of expectedAtMeta) expect(sentToMeta(id), id).toBeGreaterThan(0)
    const [open] = await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where site_id = 'shop' and status in ('pending', 'retrying')`, [], on)
    expect(open!.n).toBe(0)
  }, { timeout: 20_000, interval: 100 })
}

describe('Stripe webhooks in every order of arrival', () => {
  it('a subscription\'s first payment (Checkout, first invoice, invoice payment, PaymentIntent) is one Purchase, the session\'s, in each of the 24 orders', async () => {
    const payments = await postEveryOrder('first', (ids) => [sessionCompleted(ids, 'subscription'), invoicePaid(ids, 'subscription_create'), invoicePaymentPaid(ids), intentSucceeded(ids)])
    expect(payments).toHaveLength(24)
    await afterTheWait(payments.map((ids) => `stripe-sub-${ids.subscription}`))
    for (const ids of payments) {
      expect(sentToMeta(`stripe-sub-${ids.subscription}`), ids.subscription).toBe(1)
      expect(sentToMeta(`stripe-pi-${ids.intent}`), ids.intent).toBe(0)
      // The session's copy, with its metadata and client_reference_id, whichever came first.
      expect(await stored([`stripe-sub-${ids.subscription}`, `stripe-pi-${ids.intent}`])).toEqual([{ message_id: `stripe-sub-${ids.subscription}`, source_event_type: 'checkout.session.completed', order_id: `order-${ids.session}` }])
    }
  })

  it('a renewal (invoice, invoice payment, PaymentIntent) reaches no platform and is stored nowhere, in each of the 6 orders', async () => {
    const renewals = await postEveryOrder('renew', (ids) => [invoicePaid(ids, 'subscription_cycle'), invoicePaymentPaid(ids), intentSucceeded(ids)])
    expect(renewals).toHaveLength(6)
    // A one-time payment posted after them: once it reached Meta, the worker has run past their due time too.
    const later = idsOf('renew-witness')
    await post(intentSucceeded(later))
    await afterTheWait([`stripe-pi-${later.intent}`])
    for (const ids of renewals) {
      expect([sentToMeta(`stripe-pi-${ids.intent}`), sentToMeta(`stripe-in-${ids.invoice}`)], ids.intent).toEqual([0, 0])
      expect(await stored([`stripe-pi-${ids.intent}`, `stripe-in-${ids.invoice}`, `stripe-sub-${ids.subscription}`])).toEqual([])
    }
  })

  it('a one-time PaymentIntent is one Purchase, sent once the wait is over; a retry of its webhook changes nothing', async () => {
    const ids = idsOf('once')
    const answer = await post(intentSucceeded(ids))
    expect(answer).toMatchObject({ accepted: true, events: [{ messageId: `stripe-pi-${ids.intent}`, success: true, message: `stored; delivering in ${WAIT_SECONDS} s unless a later webhook withdraws it` }] })
    expect(await post(intentSucceeded(ids))).toMatchObject({ events: [{ message: 'duplicate_delivery_skipped' }] })
    expect(sentToMeta(`stripe-pi-${ids.intent}`)).toBe(0)
    // Its rows are due waitSeconds after it arrived.
    const [due] = await sql<{ seconds: number }[]>(`select min(extract(epoch from d.next_attempt_at - now()))::float as seconds from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ?`, [`stripe-pi-${ids.intent}`])
    expect(due!.seconds).toBeGreaterThan(WAIT_SECONDS - 30)
    expect(due!.seconds).toBeLessThanOrEqual(WAIT_SECONDS)
    await afterTheWait([`stripe-pi-${ids.intent}`])
    expect(sentToMeta(`stripe-pi-${ids.intent}`)).toBe(1)
  })

  it('a one-time Checkout payment is one Purchase, the session\'s, whichever of its session and PaymentIntent comes first', async () => {
    const payments = await postEveryOrder('checkout', (ids) => [sessionCompleted(ids, 'payment'), intentSucceeded(ids)])
    await afterTheWait(payments.map((ids) => `stripe-pi-${ids.intent}`))
    for (const ids of payments) {
      expect(sentToMeta(`stripe-pi-${ids.intent}`), ids.intent).toBe(1)
      // The session replaced the PaymentIntent's waiting copy: the shop's order id from its metadata went out.
      expect(await stored([`stripe-pi-${ids.intent}`])).toEqual([{ message_id: `stripe-pi-${ids.intent}`, source_event_type: 'checkout.session.completed', order_id: `order-${ids.session}` }])
    }
  })

  it('the Checkout Session replaces its subscription\'s first invoice that came first, and the invoice payment withdraws the PaymentIntent, with their answers saying so', async () => {
    const ids = idsOf('answers')
    expect(await post(invoicePaid(ids, 'subscription_create'))).toMatchObject({ events: [{ messageId: `stripe-sub-${ids.subscription}`, success: true, message: `stored; delivering in ${WAIT_SECONDS} s unless a later webhook withdraws it` }] })
    expect(await post(intentSucceeded(ids))).toMatchObject({ events: [{ messageId: `stripe-pi-${ids.intent}`, success: true }] })
    expect(await post(invoicePaymentPaid(ids))).toMatchObject({ events: [], withdrawals: [{ message_id: `stripe-pi-${ids.intent}`, outcome: 'removed' }] })
    expect(await post(sessionCompleted(ids, 'subscription'))).toMatchObject({
      withdrawals: [{ message_id: `stripe-sub-${ids.subscription}`, outcome: 'removed' }],
      events: [{ messageId: `stripe-sub-${ids.subscription}`, success: true }],
    })
    // A retry of the PaymentIntent's webhook after its withdrawal is removed again at once.
    expect(await post(intentSucceeded(ids))).toMatchObject({ events: [{ success: true, message: expect.stringMatching(/^withdrawn before it was sent: PaymentIntent pi_answers paid invoice in_answers/) }] })
    await afterTheWait([`stripe-sub-${ids.subscription}`])
    expect(await stored([`stripe-sub-${ids.subscription}`, `stripe-pi-${ids.intent}`])).toEqual([{ message_id: `stripe-sub-${ids.subscription}`, source_event_type: 'checkout.session.completed', order_id: `order-${ids.session}` }])
  })

  it('a subscription started without Checkout is one Purchase, from its first invoice, once the wait is over', async () => {
    const payments = await postEveryOrder('direct', (ids) => [invoicePaid(ids, 'subscription_create'), invoicePaymentPaid(ids), intentSucceeded(ids)])
    await afterTheWait(payments.map((ids) => `stripe-sub-${ids.subscription}`))
    for (const ids of payments) {
      expect([sentToMeta(`stripe-sub-${ids.subscription}`), sentToMeta(`stripe-pi-${ids.intent}`)], ids.subscription).toEqual([1, 0])
      expect(await stored([`stripe-sub-${ids.subscription}`])).toEqual([{ message_id: `stripe-sub-${ids.subscription}`, source_event_type: 'invoice.paid', order_id: `order-${ids.subscription}` }])
    }
  })

  it(`on API versions before basil (${OLD_VERSION}): the PaymentIntent names its invoice and is never counted; a one-time one is sent without waiting`, async () => {
    const payments = await postEveryOrder('old', (ids) => [sessionCompleted(ids, 'subscription', OLD_VERSION), legacyInvoicePaid(ids, 'subscription_create', OLD_VERSION), intentSucceeded(ids, { apiVersion: OLD_VERSION, invoice: ids.invoice })])
    const renewal = idsOf('old-renewal')
    for (const body of [legacyInvoicePaid(renewal, 'subscription_cycle', OLD_VERSION), intentSucceeded(renewal, { apiVersion: OLD_VERSION, invoice: renewal.invoice })]) {
      expect(await post(body)).toMatchObject({ accepted: false, ignored: expect.any(String) })
    }
    const once = idsOf('old-once')
    expect(await post(intentSucceeded(once, { apiVersion: OLD_VERSION, invoice: null }))).toMatchObject({ events: [{ message: 'stored; delivering in the background' }] })
    await afterTheWait([...payments.map((ids) => `stripe-sub-${ids.subscription}`), `stripe-pi-${once.intent}`])
    for (const ids of payments) expect([sentToMeta(`stripe-sub-${ids.subscription}`), sentToMeta(`stripe-pi-${ids.intent}`)], ids.subscription).toEqual([1, 0])
    expect([sentToMeta(`stripe-pi-${renewal.intent}`), sentToMeta(`stripe-in-${renewal.invoice}`), sentToMeta(`stripe-pi-${once.intent}`)]).toEqual([0, 0, 1])
  })
})

describe('withdrawals kept', () => {
  it('a PaymentIntent and its invoice payment arriving at the same moment, twenty times over: none is sent', async () => {
    const pairs = Array.from({ length: 20 }, (_, n) => idsOf(`race${n}`))
    await Promise.all(pairs.flatMap((ids) => [post(intentSucceeded(ids)), post(invoicePaymentPaid(ids))]))
    const witness = idsOf('race-witness')
    await post(intentSucceeded(witness))
    await afterTheWait([`stripe-pi-${witness.intent}`])
    for (const ids of pairs) expect(sentToMeta(`stripe-pi-${ids.intent}`), ids.intent).toBe(0)
    expect(await stored(pairs.map((ids) => `stripe-pi-${ids.intent}`))).toEqual([])
  })

  it('a Checkout Session and the copy it replaces arriving at the same moment, twenty times over: one Purchase each, the session\'s', async () => {
    const subscriptions = Array.from({ length: 10 }, (_, n) => idsOf(`race-sub${n}`))
    const payments = Array.from({ length: 10 }, (_, n) => idsOf(`race-pay${n}`))
    await Promise.all([
      ...subscriptions.flatMap((ids) => [post(sessionCompleted(ids, 'subscription')), post(invoicePaid(ids, 'subscription_create'))]),
      ...payments.flatMap((ids) => [post(sessionCompleted(ids, 'payment')), post(intentSucceeded(ids))]),
    ])
    const ids = [...subscriptions.map((i) => [`stripe-sub-${i.subscription}`, i.session] as const), ...payments.map((i) => [`stripe-pi-${i.intent}`, i.session] as const)]
    await afterTheWait(ids.map(([messageId]) => messageId))
    for (const [messageId, session] of ids) {
      expect(sentToMeta(messageId), messageId).toBe(1)
      expect(await stored([messageId])).toEqual([{ message_id: messageId, source_event_type: 'checkout.session.completed', order_id: `order-${session}` }])
    }
  })

  it('a PaymentIntent a cut process stored but never checked is removed when Stripe retries its webhook', async () => {
    const ids = idsOf('cut')
    await post(invoicePaymentPaid(ids))
    // What a process killed between storing and checking leaves: the conversion stored, waiting, unchecked; Stripe,
    // answered nothing, sends the event again.
    const site = app.dcgate.context.sites.byId('shop')!
    await app.dcgate.context.conversions.accept(site, { messageId: `stripe-pi-${ids.intent}`, event: 'Purchase', value: 29, currency: 'EUR' }, {
      source: 'stripe', sourceEventType: 'payment_intent.succeeded', confirmation: 'payment_confirmed', trust: 'trusted', deliver: 'background', waitSeconds: WAIT_SECONDS,
    })
    expect(await post(intentSucceeded(ids))).toMatchObject({ events: [{ success: true, message: expect.stringMatching(/^withdrawn before it was sent: PaymentIntent pi_cut paid invoice in_cut/) }] })
    expect(await stored([`stripe-pi-${ids.intent}`])).toEqual([])
  })

  it('are dropped after 30 days by the intake:conversion-waits job', async () => {
    await sql(`insert into conversion_waits (site_id, message_id, reason, withdrawn_types, created_at) values
      ('shop', 'stripe-pi-pi_old', 'paid an invoice', '{payment_intent.succeeded}', now() - interval '31 days'),
      ('shop', 'stripe-pi-pi_recent', 'paid an invoice', '{payment_intent.succeeded}', now() - interval '29 days')`)
    expect(await purgeWaits(app.dcgate.context.prepared)).toBe(1)
    expect(await sql(`select message_id from conversion_waits where message_id in ('stripe-pi-pi_old', 'stripe-pi-pi_recent')`)).toEqual([{ message_id: 'stripe-pi-pi_recent' }])
  })
})

describe('a restart during the wait', () => {
  it('loses no conversion: another process on the same database sends the waiting PaymentIntent, and still honours a withdrawal', async () => {
    const database = await sharedDatabase()
    const fake = await startFakeMeta()
    const boot = () => bootTestApp({ plugins: ['intake'], delivery: DELIVERY, sites: [siteConfig(fake)] }, { databaseUrl: database.url })
    const [kept, withdrawn] = [idsOf('restart-kept'), idsOf('restart-withdrawn')]
    try {
      const first = await boot()
      await post(intentSucceeded(kept), first)
      await post(intentSucceeded(withdrawn), first)
      await first.close()

      const second = await boot()
      try {
        await post(invoicePaymentPaid(withdrawn), second)
        await sql(`update deliveries set next_attempt_at = now() where status = 'pending' and attempts = 0`, [], second)
        await vi.waitFor(async () => {
          expect(fake.events.filter((e) => e.event_id === `stripe-pi-${kept.intent}`)).toHaveLength(1)
          const [open] = await sql<{ n: number }[]>(`select count(*)::int as n from deliveries where status in ('pending', 'retrying')`, [], second)
          expect(open!.n).toBe(0)
        }, { timeout: 30_000, interval: 100 })
        expect(fake.events.filter((e) => e.event_id === `stripe-pi-${withdrawn.intent}`)).toHaveLength(0)
      }
      finally {
        await second.close()
      }
    }
    finally {
      await fake.close()
      await database.drop()
    }
  })
})

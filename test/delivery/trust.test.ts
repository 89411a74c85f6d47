import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import woocommerce from '../../adapters/sources/woocommerce/index.ts'
import { zapier } from '../../adapters/sources/automation/index.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from './test-platform.ts'

// messageIds of different trust never collide (issue 15). The attack: a public pixel event, or an unsigned zapier
// body, claims the id of a WooCommerce order (sequential, so easy to guess) at 0.01 USD before the shop's signed
// webhook reports the real order. The platforms must get the real order, and the report must say what happened.
const WOO_SECRET = 'woo-webhook-secret-0123456789'
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const ORDER = JSON.parse(readFileSync(new URL('../sources/fixtures/woocommerce-order-paid.json', import.meta.url), 'utf8')) as Record<string, unknown>
const SITES = ['pixel-first', 'zapier-first', 'woo-first'] as const

let fake: FakeServer
let app: TestApp

const site = (id: string) => ({
  id, name: id, consent: { banner: 'off' as const },
  // Each site posts to its own path on the one fake, so what it received can be told apart.
  destinations: { testads: { baseUrl: `${fake.url}/${id}`, token: 'good' } },
  sources: { woocommerce: { secret: WOO_SECRET }, zapier: {} },
})

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  // The default grace (120 s): the trusted copy arrives well inside it.
  app = await bootTestApp({
    plugins: ['intake', 'capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    delivery: { workerIntervalMs: 25 },
    sites: SITES.map(site),
  }, { adapters: [testPlatform, woocommerce, zapier], builtInPlugins })
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

/** The page's Purchase, as the tracking script sends `dcutils.track('Purchase', props, { id })`. */
function pixelPurchase(target: TestApp, siteId: string, id: string, value: number, currency: string, orderId?: string) {
  const copKey = target.dcgate.context.sites.byId(siteId)!.copKey
  return target.request(`/collect?cop_key=${copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1' },
    body: JSON.stringify({
      v: 1, sid: `sess-${siteId}-${id}`, vid: 'visitor-attacker', consent: 'granted',
      hits: [{ t: 'event', ts: Date.now(), url: 'https://shop.example/thanks', name: 'Purchase', id, props: { value, currency, ...(orderId ? { order_id: orderId } : {}) } }],
    }),
  })
}

/** An unsigned body on the public zapier URL: anyone who knows the cop_key can send it. */
async function unsignedZapier(target: TestApp, siteId: string, body: Record<string, unknown>) {
  const copKey = target.dcgate.context.sites.byId(siteId)!.copKey
  const response = await target.request(`/api/v1/conversions/zapier/${copKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(response.status).toBe(200)
  return (await response.json()) as { events: { messageId: string, message: string }[] }
}

/** WooCommerce's order.updated webhook for a paid order, signed as WC_Webhook::generate_signature does. */
async function signedWooOrder(target: TestApp, siteId: string, id: number, total: string, currency: string) {
  const copKey = target.dcgate.context.sites.byId(siteId)!.copKey
  const raw = JSON.stringify({ ...ORDER, id, total, currency, date_paid_gmt: new Date().toISOString().slice(0, 19) })
  const response = await target.request(`/api/v1/conversions/woocommerce/${copKey}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'x-wc-webhook-topic': 'order.updated',
      'x-wc-webhook-signature': createHmac('sha256', WOO_SECRET).update(raw).digest('base64'),
    },
    body: raw,
  })
  expect(response.status).toBe(200)
  return (await response.json()) as { events: { messageId: string, message: string }[] }
}

interface ReportRow { message_id: string, source: string, status: string, error: string | null, attempts: number, value: number, currency: string, next_attempt_at: string }
async function report(target: TestApp, siteId: string): Promise<ReportRow[]> {
  const response = await target.admin('GET', `/sites/${siteId}/deliveries`)
  return ((await response.json()) as { deliveries: ReportRow[] }).deliveries
}

/** What reached the fake platform from a site under an event id. */
const received = (siteId: string, eventId: string) => fake.requests
  .filter((r) => r.path.startsWith(`/${siteId}/`))
  .flatMap((r) => (JSON.parse(r.body) as { events: { id: string, value: number, currency: string }[] }).events)
  .filter((e) => e.id === eventId)

describe('a public conversion squatting a trusted messageId', () => {
  it.each([
    ['the tracking script', 'pixel-first', 'pixel'],
    ['the unsigned zapier route', 'zapier-first', 'zapier'],
  ] as const)('from %s: the signed webhook\'s real order is delivered, the public copy is reported superseded', async (_, siteId, source) => {
    if (source === 'pixel') expect((await pixelPurchase(app, siteId, 'woocommerce-order-555', 0.01, 'USD')).status).toBe(202)
    else expect((await unsignedZapier(app, siteId, { event: 'Purchase', messageId: 'woocommerce-order-555', properties: { value: 0.01, currency: 'USD' } })).events[0]!.message).toBe('stored; delivering in the background')

    // Stored, and waiting its grace: a page-chosen id may be the copy of an order a signed webhook reports next.
    const [squatter] = await report(app, siteId)
    expect(squatter).toMatchObject({ message_id: 'woocommerce-order-555', source, status: 'pending', attempts: 0, value: 0.01, currency: 'USD' })
    expect(Date.parse(squatter!.next_attempt_at) - Date.now()).toBeGreaterThan(100_000)

    const webhook = await signedWooOrder(app, siteId, 555, '199.00', 'EUR')
    expect(webhook.events).toEqual([expect.objectContaining({ messageId: 'woocommerce-order-555', message: 'stored; delivering in the background' })])

    await expect.poll(async () => (await report(app, siteId)).find((r) => r.source === 'woocommerce')?.status, { timeout: 10_000 }).toBe('sent')
    const rows = await report(app, siteId)
    expect(rows.map((r) => [r.source, r.message_id, r.status, r.error, r.attempts])).toEqual([
      ['woocommerce', 'woocommerce-order-555', 'sent', null, 1],
      [source, 'woocommerce-order-555', 'skipped', 'superseded by a woocommerce conversion with the same messageId', 0],
    ])
    // The real order, once, under the shop's own id; nothing of the attacker's.
    expect(received(siteId, 'woocommerce-order-555')).toEqual([expect.objectContaining({ value: 199, currency: 'EUR' })])
  })
})

describe('a public conversion after a trusted one with its messageId', () => {
  it('is a duplicate, stored nowhere, though answered as a new one (a public sender learns no stored id)', async () => {
    await signedWooOrder(app, 'woo-first', 556, '199.00', 'EUR')
    await expect.poll(async () => (await report(app, 'woo-first')).map((r) => r.status), { timeout: 10_000 }).toEqual(['sent'])

    expect((await pixelPurchase(app, 'woo-first', 'woocommerce-order-556', 0.01, 'USD')).status).toBe(202)
    const zapierAnswer = await unsignedZapier(app, 'woo-first', { event: 'Purchase', messageId: 'woocommerce-order-556', properties: { value: 0.01, currency: 'USD' } })
    expect(zapierAnswer.events[0]).toMatchObject({ messageId: 'woocommerce-order-556', message: 'stored; delivering in the background' })
    // And the webhook's own redelivery is a duplicate too, as before.
    expect((await signedWooOrder(app, 'woo-first', 556, '199.00', 'EUR')).events[0]!.message).toBe('duplicate_delivery_skipped')

    const rows = await report(app, 'woo-first')
    expect(rows.map((r) => [r.source, r.message_id, r.status])).toEqual([['woocommerce', 'woocommerce-order-556', 'sent']])
    expect(received('woo-first', 'woocommerce-order-556')).toHaveLength(1)
  })
})

describe('a public conversion past its grace', () => {
  let short: TestApp
  beforeAll(async () => {
    short = await bootTestApp({
      plugins: ['intake', 'capture', 'export'],
      server: { trustProxy: true },
      capture: { flushIntervalMs: 20 },
      // A retry comes 3 to 6 s after a failed attempt: time to send the trusted copy in between.
      delivery: { workerIntervalMs: 25, publicGraceSeconds: 1, retryBaseMs: 6000 },
      sites: [site('graced')],
    }, { adapters: [testPlatform, woocommerce, zapier], builtInPlugins })
  })
  afterAll(async () => {
    await short?.close()
  })

  it('is delivered under the id the page gave, as the site\'s own pixel sends it, so the platform counts the two once', async () => {
    const sentAt = Date.now()
    expect((await pixelPurchase(short, 'graced', 'order-9001', 0.01, 'USD', '9001')).status).toBe(202)
    await expect.poll(() => received('graced', 'order-9001').length, { timeout: 10_000 }).toBe(1)
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1000)
    expect(received('graced', 'order-9001')[0]).toMatchObject({ value: 0.01, currency: 'USD' })
    // The trust tier stays internal: no platform sees it.
    expect(fake.requests.some((r) => r.body.includes('public:'))).toBe(false)

    // The shop's signed copy, later still, is stored and reaches the platform under the real id.
    await signedWooOrder(short, 'graced', 9001, '42.00', 'EUR')
    const rows = () => report(short, 'graced')
    await expect.poll(async () => (await rows()).map((r) => [r.source, r.message_id, r.status]), { timeout: 10_000 }).toEqual([
      ['woocommerce', 'woocommerce-order-9001', 'sent'],
      ['pixel', 'order-9001', 'sent'],
    ])
    expect(received('graced', 'woocommerce-order-9001')).toEqual([expect.objectContaining({ value: 42, currency: 'EUR' })])

    // Both share order id 9001; the export's fold by order id does not let the public one hide the real order.
    const key = await short.createKey('graced')
    const exported = async () => {
      const response = await short.request(`/api/v1/export/conversions?until=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { headers: { 'x-dc-key': key } })
      return ((await response.json()) as { data: { order_id: string, value: number, currency: string }[] }).data.map((r) => [r.order_id, r.value, r.currency])
    }
    await expect.poll(exported, { timeout: 10_000 }).toEqual([['9001', 0.01, 'USD'], ['9001', 42, 'EUR']])
  })

  it('a public conversion waiting for a retry is superseded at that retry by a trusted copy stored meanwhile', async () => {
    fake.queue({ status: 503, body: { message: 'Service unavailable' } })
    await unsignedZapier(short, 'graced', { event: 'Purchase', messageId: 'woocommerce-order-7001', properties: { value: 0.01, currency: 'USD' } })
    const zapierRow = async () => (await report(short, 'graced')).find((r) => r.message_id === 'woocommerce-order-7001' && r.source === 'zapier')
    await expect.poll(async () => (await zapierRow())?.status, { timeout: 10_000 }).toBe('retrying')

    await signedWooOrder(short, 'graced', 7001, '199.00', 'EUR')
    await expect.poll(async () => (await zapierRow())?.status, { timeout: 15_000 }).toBe('skipped')
    expect(await zapierRow()).toMatchObject({ attempts: 1, error: 'superseded by a woocommerce conversion with the same messageId' })
    // The public copy's failed first attempt, then the trusted order, under the one id the platform deduplicates on.
    await expect.poll(() => received('graced', 'woocommerce-order-7001').map((e) => e.value), { timeout: 10_000 }).toEqual([0.01, 199])
  })

  it('an id dcgate made (a body without messageId) is public but waits no grace', async () => {
    const answer = await unsignedZapier(short, 'graced', { event: 'Lead', context: { traits: { email: 'lead@example.com' } } })
    const messageId = answer.events[0]!.messageId
    expect(messageId).toMatch(/^body-[0-9a-f]{32}$/)
    const [row] = (await report(short, 'graced')).filter((r) => r.message_id === messageId)
    expect(Date.parse(row!.next_attempt_at)).toBeLessThanOrEqual(Date.now())
    await expect.poll(() => received('graced', messageId).length, { timeout: 10_000 }).toBe(1)
  })
})

describe('delivery.publicGraceSeconds', () => {
  it('defaults to 120, takes 0 to turn the grace off, and refuses what is not a whole number of seconds up to an hour', () => {
    expect(resolveConfig({}, {}).delivery.publicGraceSeconds).toBe(120)
    expect(resolveConfig({ delivery: { publicGraceSeconds: 0 } }, {}).delivery.publicGraceSeconds).toBe(0)
    for (const bad of [-1, 3601, 1.5, '60']) {
      let details: string[] = []
      try {
        resolveConfig({ delivery: { publicGraceSeconds: bad } }, {})
      }
      catch (error) {
        details = error instanceof BootError ? error.details : []
      }
      expect(details).toEqual([expect.stringMatching(/^delivery\.publicGraceSeconds: /)])
    }
  })
})

import { createHmac, timingSafeEqual } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { defineIntakeSource, SourceInputError } from '../../core/registry.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import type { FakeServer } from '../fakes/server.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import { builtInPlugins } from '../../plugins/index.ts'

/**
 * The webhook route with a minimal signed source (the real sources have their own suites): a JSON body
 * `{type, orders: [{id, total, email}]}` signed with `x-test-signature: hex(HMAC-SHA256(secret, raw))`.
 */
const testSource = (name: string, signature: 'required' | 'optional') => defineIntakeSource({
  name,
  options: v.object({ secret: v.string() }),
  signature,
  confirmation: 'payment_confirmed',
  isSigned: (headers) => headers.has('x-test-signature'),
  verify: (raw, headers, options) => {
    const given = Buffer.from(headers.get('x-test-signature') ?? '', 'hex')
    const expected = createHmac('sha256', options.secret).update(raw).digest()
    return given.length === expected.length && timingSafeEqual(given, expected)
  },
  parse: (raw) => {
    let body: { type?: string, orders?: { id: string, total: number, email?: string, claim?: 'crm_qualified' }[] }
    try {
      body = JSON.parse(new TextDecoder().decode(raw)) as typeof body
    }
    catch {
      throw new SourceInputError('body: must be valid JSON')
    }
    if (body.type !== 'paid') return { kind: 'ignored', reason: `type ${String(body.type)} carries no payment` }
    if (!Array.isArray(body.orders)) throw new SourceInputError('orders: must be an array')
    return {
      kind: 'conversions',
      sourceEventType: 'order.paid',
      conversions: body.orders.map((order) => ({ messageId: `test-order-${order.id}`, event: 'Purchase', orderId: order.id, value: order.total, currency: 'EUR', traits: { email: order.email, country: 'de' }, confirmation: order.claim })),
    }
  },
})

const SECRET = 'shh-test-secret'
let app: TestApp
let fake: FakeServer
let copKey: string
let pausedCopKey: string

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [
      { id: 'demo', name: 'Demo', destinations: { testads: { baseUrl: fake.url, token: 'good' } }, sources: { shop: { secret: SECRET }, tool: { secret: SECRET } } },
      { id: 'other', name: 'No sources', destinations: { testads: { baseUrl: fake.url, token: 'good' } } },
      { id: 'paused', name: 'Paused', status: 'paused', sources: { shop: { secret: SECRET } } },
    ],
  }, { adapters: [testPlatform, testSource('shop', 'required'), testSource('tool', 'optional')], builtInPlugins })
  copKey = app.dcgate.context.sites.byId('demo')!.copKey
  pausedCopKey = app.dcgate.context.sites.byId('paused')!.copKey
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

const sign = (raw: string, secret = SECRET) => createHmac('sha256', secret).update(raw).digest('hex')
function post(source: string, body: unknown, options: { key?: string, signature?: string | null } = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body)
  const signature = options.signature === undefined ? sign(raw) : options.signature
  return app.request(`/api/v1/conversions/${source}/${options.key ?? copKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(signature === null ? {} : { 'x-test-signature': signature }) },
    body: raw,
  })
}
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const stored = (messageId: string) => sql<{ confirmation: string, source: string, source_event_type: string, country: string, order_id: string }[]>(
  'select confirmation, source, source_event_type, country, order_id from conversions where message_id = ?', [messageId])
async function deliveredTo(messageId: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const rows = await sql<{ status: string }[]>('select d.status from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ?', [messageId])
    if (rows.length > 0 && rows.every((r) => r.status === 'sent')) return fake.requests.filter((r) => r.body.includes(`"id":"${messageId}"`)).length
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`${messageId} was not delivered`)
}

describe('POST /api/v1/conversions/:source/:api_key', () => {
  it('stores a signed webhook, answers 200 at once, and the worker delivers it as payment_confirmed', async () => {
    const response = await post('shop', { type: 'paid', orders: [{ id: 'A1', total: 20, email: 'a@example.com' }] })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({
      accepted: true, source: 'shop', adapter_version: expect.stringMatching(/^v\d{4}-\d{2}$/), duration_ms: expect.any(Number),
      events: [{ messageId: 'test-order-A1', success: true, message: 'stored; delivering in the background' }],
    })
    expect(await stored('test-order-A1')).toEqual([{ confirmation: 'payment_confirmed', source: 'shop', source_event_type: 'order.paid', country: 'DE', order_id: 'A1' }])
    expect(await deliveredTo('test-order-A1')).toBe(1)
  })

  it('a replayed webhook answers 200 duplicate_delivery_skipped and delivers nothing new', async () => {
    await post('shop', { type: 'paid', orders: [{ id: 'A2', total: 5 }] })
    expect(await deliveredTo('test-order-A2')).toBe(1)
    const replay = await post('shop', { type: 'paid', orders: [{ id: 'A2', total: 5 }] })
    expect(replay.status).toBe(200)
    expect(await replay.json()).toMatchObject({ events: [{ messageId: 'test-order-A2', message: 'duplicate_delivery_skipped' }] })
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(await deliveredTo('test-order-A2')).toBe(1)
  })

  it('a wrong or missing signature answers 401 INVALID_SIGNATURE and stores nothing', async () => {
    const body = { type: 'paid', orders: [{ id: 'B1', total: 1 }] }
    for (const signature of [sign(JSON.stringify(body), 'wrong-secret'), null, 'zz', '']) {
      const response = await post('shop', body, { signature })
      expect(response.status).toBe(401)
      expect(await response.json()).toMatchObject({ code: 'INVALID_SIGNATURE', message: expect.stringContaining('nothing was stored') })
    }
    expect(await stored('test-order-B1')).toEqual([])
  })

  it('an unknown cop_key, an unknown source, or a source the site has not configured answers 404', async () => {
    const body = { type: 'paid', orders: [{ id: 'C1', total: 1 }] }
    for (const response of [
      await post('shop', body, { key: 'cop_not-a-key' }),
      await post('nosuch', body),
      await post('shop', body, { key: app.dcgate.context.sites.byId('other')!.copKey }),
    ]) {
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ message: 'Unknown key or source' })
    }
    expect(await stored('test-order-C1')).toEqual([])
  })

  it('a paused site answers 402 APP_INACTIVE', async () => {
    const response = await post('shop', { type: 'paid', orders: [{ id: 'D1', total: 1 }] }, { key: pausedCopKey })
    expect(response.status).toBe(402)
    expect(await response.json()).toMatchObject({ code: 'APP_INACTIVE' })
  })

  it('a signed body the source cannot read answers 422 INVALID_WEBHOOK naming the problem', async () => {
    const notJson = await post('shop', 'not json {')
    expect(notJson.status).toBe(422)
    expect(await notJson.json()).toEqual({ message: 'body: must be valid JSON', code: 'INVALID_WEBHOOK', errors: ['body: must be valid JSON'] })
    const noOrders = await post('shop', { type: 'paid' })
    expect(noOrders.status).toBe(422)
  })

  it('a webhook that carries no conversion answers 200 with the reason, storing nothing', async () => {
    const response = await post('shop', { type: 'refunded', orders: [{ id: 'E1', total: 1 }] })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ accepted: false, source: 'shop', ignored: 'type refunded carries no payment', events: [] })
    expect(await stored('test-order-E1')).toEqual([])
  })

  it('an optional-signature source takes unsigned bodies as tracked only, and honours a signed claim', async () => {
    expect((await post('tool', { type: 'paid', orders: [{ id: 'F1', total: 1, claim: 'crm_qualified' }] }, { signature: null })).status).toBe(200)
    expect((await stored('test-order-F1'))[0]).toMatchObject({ confirmation: 'tracked' })
    expect((await post('tool', { type: 'paid', orders: [{ id: 'F2', total: 1, claim: 'crm_qualified' }] })).status).toBe(200)
    expect((await stored('test-order-F2'))[0]).toMatchObject({ confirmation: 'crm_qualified' })
    expect((await post('tool', { type: 'paid', orders: [{ id: 'F3', total: 1 }] }, { signature: 'badbad' })).status).toBe(401)
    expect(await stored('test-order-F3')).toEqual([])
  })

  it('is listed in /openapi.json', async () => {
    const openapi = await (await app.request('/openapi.json')).json() as { paths: Record<string, { post?: unknown }> }
    expect(openapi.paths['/api/v1/conversions/{source}/{api_key}']?.post).toBeDefined()
  })
})

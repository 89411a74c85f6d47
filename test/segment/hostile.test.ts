import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { basicAuth, SHOP_EVENTS } from './support.ts'

// Every way a Segment-style request can be wrong gets a 4xx in the error shape of docs/api/errors.md, never a 500;
// within a batch each message is taken or refused on its own.
let app: TestApp
let key: string
let pausedKey: string

beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['segment'],
    sites: [{ id: 'shop', name: 'Shop', events: SHOP_EVENTS }, { id: 'paused', name: 'Paused', status: 'paused' }],
  })
  key = await app.createKey('shop')
  pausedKey = await app.createKey('paused')
})
afterAll(async () => {
  await app?.close()
})

const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = { authorization: basicAuth(key) }) =>
  app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) })
const json = (value: unknown) => JSON.stringify(value)
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const order = (messageId: string, extra: Record<string, unknown> = {}) => ({ type: 'track', event: 'Order Completed', messageId, userId: 'u-1', properties: { revenue: 10, currency: 'USD', order_id: messageId }, ...extra })

describe('Segment-compatible intake: authentication', () => {
  it('401 without a key, with a wrong key, a malformed Basic header, or a body key that differs from the header', async () => {
    expect((await post('/v1/track', json(order('a-1')), {})).status).toBe(401)
    const wrong = await post('/v1/track', json(order('a-2')), { authorization: basicAuth('dcp_wrongwrongwrongwrongwrongwrongwrongwrong123') })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual({ message: 'Invalid API key' })
    expect((await post('/v1/track', json(order('a-3')), { authorization: 'Basic %%%not-base64' })).status).toBe(401)
    expect((await post('/v1/track', json({ ...order('a-4'), writeKey: pausedKey }))).status).toBe(401)
    expect((await post('/v1/track', json({ ...order('a-5'), writeKey: 42 }), {})).status).toBe(401)
    expect(await sql('select 1 from conversions')).toEqual([])
  })

  it('checks a Basic key before reading the body: a stranger\'s 600 KB is refused 401, unread', async () => {
    const huge = json({ batch: [order('x-1', { properties: { note: 'q'.repeat(600 * 1024) } })] })
    expect((await post('/v1/batch', huge, { authorization: basicAuth('dcp_wrongwrongwrongwrongwrongwrongwrongwrong123') })).status).toBe(401)
  })

  it('takes the write key from the body when no Basic header is sent, as Segment documents', async () => {
    const response = await post('/v1/track', json({ ...order('w-1'), writeKey: key }), {})
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, accepted: 1, duplicates: 0, ignored: 0, rejected: 0 })
  })

  it('402 for a paused site, nothing stored', async () => {
    const response = await post('/v1/batch', json({ batch: [order('p-1')] }), { authorization: basicAuth(pausedKey) })
    expect(response.status).toBe(402)
    expect(await sql(`select 1 from conversions where message_id = 'p-1'`)).toEqual([])
  })
})

describe('Segment-compatible intake: bodies', () => {
  it('400 for invalid JSON, a body that is no object, a batch that is no array, invalid UTF-8 and broken gzip', async () => {
    for (const [path, body] of [['/v1/batch', '{"batch": ['], ['/v1/track', '[1,2]'], ['/v1/batch', json({ batch: { a: 1 } })], ['/v1/track', '"text"']] as const) {
      const response = await post(path, body)
      expect(response.status, body).toBe(400)
      expect(await response.json()).toMatchObject({ message: expect.any(String), errors: expect.any(Array) })
    }
    expect((await post('/v1/track', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).status).toBe(400)
    expect((await post('/v1/batch', new Uint8Array([0x1f, 0x8b, 1, 2, 3]), { authorization: basicAuth(key), 'content-encoding': 'gzip' })).status).toBe(400)
  })

  it('413 past 32 KB for one message and 500 KB for a batch, compressed or not; 415 for an unknown encoding', async () => {
    const big = 'x'.repeat(40 * 1024)
    expect((await post('/v1/track', json(order('big-1', { properties: { note: big } })))).status).toBe(413)
    const huge = json({ batch: [order('big-2', { properties: { note: 'y'.repeat(600 * 1024) } })] })
    expect((await post('/v1/batch', huge)).status).toBe(413)
    // 600 KB of the same letter gzips to about a kilobyte: the decoded size is what counts.
    expect((await post('/v1/batch', gzipSync(huge), { authorization: basicAuth(key), 'content-encoding': 'gzip' })).status).toBe(413)
    expect((await post('/v1/batch', json({ batch: [] }), { authorization: basicAuth(key), 'content-encoding': 'br' })).status).toBe(415)
    expect(await sql(`select 1 from conversions where message_id like 'big-%'`)).toEqual([])
  })

  it('takes a gzipped batch (RudderStack compresses by default)', async () => {
    const response = await post('/v1/batch', gzipSync(json({ batch: [order('gz-1')] })), { authorization: basicAuth(key), 'content-encoding': 'gzip' })
    expect(await response.json()).toEqual({ success: true, accepted: 1, duplicates: 0, ignored: 0, rejected: 0 })
  })
})

describe('Segment-compatible intake: messages', () => {
  it('refuses bad messages one by one in a batch, naming each field, and takes the rest', async () => {
    const response = await post('/v1/batch', json({
      batch: [
        order('m-ok'),
        order('m-nul', { userId: 'a\u0000b' }),
        order('m-ip', { context: { ip: 'not-an-ip' } }),
        order('m-value', { properties: { revenue: 'lots' } }),
        order('m-email', { context: { traits: { email: 'not an email' } } }),
        order('m-big', { properties: { note: 'z'.repeat(33 * 1024) } }),
        { type: 'track', messageId: 'm-noevent' },
        { type: 'launch', messageId: 'm-type' },
        'not an object',
        { ...order('m-lone'), event: 'Order Completed', userId: '\ud800' },
      ],
    }))
    expect(response.status).toBe(200)
    const body = await response.json() as { accepted: number, rejected: number, errors: { index: number, messageId?: string, errors: string[] }[] }
    expect(body).toMatchObject({ success: true, accepted: 1, duplicates: 0, ignored: 0, rejected: 9 })
    expect(body.errors.map((e) => e.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(body.errors[0]).toMatchObject({ messageId: 'm-nul', errors: [expect.stringMatching(/^userId: /)] })
    expect(body.errors[1]!.errors[0]).toMatch(/^context\.ip: /)
    // Named as the client sent it (revenue), not as the automation body calls it (value).
    expect(body.errors[2]!.errors[0]).toMatch(/^properties\.revenue: /)
    expect(body.errors[3]!.errors[0]).toMatch(/^context\.traits\.email: /)
    expect(body.errors[4]!.errors[0]).toMatch(/^message: is \d+ bytes/)
    expect(body.errors[5]!.errors).toEqual(['event: is required for a track message'])
    expect(body.errors[6]!.errors[0]).toMatch(/^type: must be one of/)
    expect(body.errors[7]).toEqual({ index: 8, errors: ['message: must be a JSON object'] })
    expect(JSON.stringify(body)).not.toContain('not an email')
    expect(await sql<{ message_id: string }[]>(`select message_id from conversions where message_id like 'm-%'`)).toEqual([{ message_id: 'm-ok' }])
  })

  it('counts every refused message but names only the first hundred', async () => {
    const response = await post('/v1/batch', json({ batch: Array.from({ length: 300 }, () => ({})) }))
    const body = await response.json() as { rejected: number, errors: { index: number }[] }
    expect(body.rejected).toBe(300)
    expect(body.errors.map((e) => e.index)).toEqual(Array.from({ length: 100 }, (_, i) => i))
  })

  it('answers a single bad track 400 in the error shape, nothing stored', async () => {
    const response = await post('/v1/track', json(order('s-bad', { context: { ip: '999.1.1.1' } })))
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ message: expect.stringMatching(/^context\.ip: /), errors: [expect.stringMatching(/^context\.ip: /)] })
    expect(await sql(`select 1 from conversions where message_id = 's-bad'`)).toEqual([])
  })

  it('answers 200 and ignores identify, page, other types and events the site does not know, counting them', async () => {
    expect(await (await post('/v1/identify', json({ userId: 'u-1', traits: { email: 'ann@example.com' }, messageId: 'i-1' }))).json()).toEqual({ success: true, accepted: 0, duplicates: 0, ignored: 1, rejected: 0 })
    expect(await (await post('/v1/page', json({ userId: 'u-1', name: 'Home', messageId: 'pg-1' }))).json()).toEqual({ success: true, accepted: 0, duplicates: 0, ignored: 1, rejected: 0 })
    const response = await post('/v1/batch', json({ batch: [{ type: 'screen', userId: 'u' }, { type: 'group', userId: 'u' }, { type: 'alias', userId: 'u' }, { type: 'track', event: 'Product Viewed', userId: 'u', messageId: 'pv-1' }] }))
    expect(await response.json()).toEqual({ success: true, accepted: 0, duplicates: 0, ignored: 4, rejected: 0 })
    expect(await sql(`select 1 from conversions where message_id in ('i-1', 'pg-1', 'pv-1')`)).toEqual([])
  })

  it('maps the message as the automation route would: value, order id, hashed identity, click ids, skew-corrected time', async () => {
    const sentAt = new Date(Date.now() + 3_600_000).toISOString()
    const original = new Date(Date.now() + 3_600_000 - 5_000).toISOString()
    const response = await post('/v1/batch', json({
      sentAt,
      batch: [{
        type: 'track', event: 'order completed', messageId: 'map-1', userId: 'u-9', originalTimestamp: original,
        properties: { total: '99.90', currency: 'gbp', orderId: 777, products: [{ productId: 'p-9', price: 49.95, quantity: 2 }] },
        context: { ip: '198.51.100.4', traits: { email: 'Map.Person@Example.com', firstName: 'Map' }, campaign: { source: 'google', gclid: 'G-CLICK' }, page: { url: 'https://shop.example/?fbclid=FB-CLICK' } },
      }],
    }))
    expect(await response.json()).toMatchObject({ accepted: 1, rejected: 0 })
    const [row] = await sql<{ standard_event: string, event_name: string, value: number, currency: string, order_id: string, source_event_type: string, click_ids: Record<string, string>, occurred_at: Date }[]>(
      `select * from conversions where message_id = 'map-1'`)
    expect(row).toMatchObject({ standard_event: 'Purchase', value: 99.9, currency: 'GBP', order_id: '777', source_event_type: 'segment:track' })
    expect(JSON.stringify(row)).not.toContain('Map.Person')
    expect(JSON.stringify(row)).toContain('G-CLICK')
    // The device clock ran an hour fast: the message happened about five seconds before it arrived.
    expect(Math.abs(Date.now() - 5_000 - new Date(row!.occurred_at).getTime())).toBeLessThan(60_000)
  })
})

describe('Segment-compatible intake: API reference', () => {
  it('lists the four routes in /openapi.json with their answers', async () => {
    const doc = await (await app.request('/openapi.json')).json() as { paths: Record<string, { post?: { responses: Record<string, unknown> } }> }
    for (const path of ['/v1/track', '/v1/identify', '/v1/page', '/v1/batch']) {
      expect(Object.keys(doc.paths[path]?.post?.responses ?? {}).sort(), path).toEqual(['200', '400', '401', '402', '413', '415', '503'])
    }
  })
})

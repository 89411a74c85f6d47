import { Analytics } from '@segment/analytics-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PLATFORMS } from '../fakes/all-platforms.ts'
import { basicAuth, startSegmentWorld, type SegmentWorld } from './support.ts'

// The done-when: Segment's own Node client, pointed at dcgate, sends an "Order Completed" that the site maps
// to Purchase; it reaches each of the eight platform fakes exactly once, though the client had to retry the batch.
let world: SegmentWorld

beforeAll(async () => {
  world = await startSegmentWorld()
})
afterAll(async () => {
  await world?.close()
})

const ORDER_ID = 'ord-5001'
const deliveries = (messageId: string) => world.sql<{ provider: string, status: string, error: string | null }[]>(
  'select d.provider, d.status, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = ? order by d.provider', [messageId])

describe('@segment/analytics-node pointed at dcgate', () => {
  it('delivers a Purchase to every platform exactly once when the answer to the first attempt is lost', async () => {
    world.dropAnswers(1)
    const analytics = new Analytics({ writeKey: world.key, host: world.proxyUrl, flushAt: 20, flushInterval: 200, maxRetries: 5, httpRequestTimeout: 10_000 })
    const errors: unknown[] = []
    analytics.on('error', (error) => void errors.push(error))
    analytics.identify({ userId: 'user-42', traits: { email: 'ann.buyer@example.com', firstName: 'Ann' } })
    analytics.page({ userId: 'user-42', name: 'Checkout', properties: { url: 'https://shop.example/checkout' } })
    analytics.track({ userId: 'user-42', event: 'Product Viewed', properties: { product_id: 'p-1' } })
    analytics.track({
      userId: 'user-42',
      event: 'Order Completed',
      properties: { order_id: ORDER_ID, revenue: 129.5, currency: 'eur', products: [{ product_id: 'p-1', sku: 'SKU-1', name: 'Lamp', price: 64.75, quantity: 2 }] },
      context: {
        ip: '203.0.113.7',
        userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Version/17.0 Safari/605.1.15',
        traits: { email: 'Ann.Buyer@Example.com', phone: '+1 213 373 4253' },
        page: { url: 'https://shop.example/thanks?gclid=Cj0KCQtest&fbclid=IwARtest&ttclid=E.C.P.test' },
      },
    })
    await analytics.closeAndFlush({ timeout: 30_000 })
    expect(errors).toEqual([])

    // The client posted one batch to /v1/batch with Basic auth, lost the answer, and sent the same batch again.
    const batches = world.seen.filter((r) => r.path === '/v1/batch')
    expect(batches.length).toBeGreaterThanOrEqual(2)
    expect(batches[0]!.dropped).toBe(true)
    expect(batches[0]!.headers.authorization).toBe(basicAuth(world.key))
    expect(batches[1]!.headers['x-retry-count']).toBe('1')
    const ids = (request: { body: Buffer }) => (JSON.parse(request.body.toString()) as { batch: { messageId: string }[] }).batch.map((m) => m.messageId)
    expect(ids(batches[1]!)).toEqual(ids(batches[0]!))
    const orderMessage = (JSON.parse(batches[0]!.body.toString()) as { batch: { event?: string, messageId: string }[] }).batch.find((m) => m.event === 'Order Completed')!

    const conversions = await world.sql<{ message_id: string, standard_event: string, source: string, order_id: string, value: number, currency: string, confirmation: string }[]>(
      'select message_id, standard_event, source, order_id, value, currency, confirmation from conversions')
    expect(conversions).toEqual([{ message_id: orderMessage.messageId, standard_event: 'Purchase', source: 'segment', order_id: ORDER_ID, value: 129.5, currency: 'EUR', confirmation: 'tracked' }])

    await expect.poll(async () => (await deliveries(orderMessage.messageId)).filter((d) => d.status === 'sent').length, { timeout: 20_000 }).toBe(8)
    expect(world.platforms.acceptedCounts()).toEqual(Object.fromEntries(PLATFORMS.map((name) => [name, 1])))
  })

  it('answers the same batch sent again with duplicates and delivers nothing new', async () => {
    const first = world.seen.find((r) => r.path === '/v1/batch')!
    const before = world.platforms.requestCount()
    const response = await fetch(`${world.serverUrl}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuth(world.key) }, body: new Uint8Array(first.body) })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, accepted: 0, duplicates: 1, ignored: 3, rejected: 0 })
    expect(await world.sql('select 1 from conversions')).toHaveLength(1)
    expect(await world.sql('select 1 from deliveries')).toHaveLength(8)
    expect(world.platforms.requestCount()).toBe(before)
    expect(world.platforms.acceptedCounts()).toEqual(Object.fromEntries(PLATFORMS.map((name) => [name, 1])))
  })
})

describe("RudderStack's Node SDK pointed at dcgate", () => {
  it('posts a gzipped /v1/batch with the write key as Basic username; its Purchase reaches every platform once', async () => {
    const { default: RudderAnalytics } = await import('@rudderstack/rudder-sdk-node')
    const seenBefore = world.seen.length
    const client = new RudderAnalytics(world.key, { dataPlaneUrl: world.proxyUrl, flushAt: 20, flushInterval: 60_000, axiosConfig: { timeout: 10_000 }, logLevel: 'error' })
    client.track({
      userId: 'user-77', event: 'Order Completed',
      properties: { order_id: 'rudder-9001', revenue: 42, currency: 'USD' },
      // TikTok takes a website event only with its page URL.
      context: { ip: '203.0.113.8', traits: { email: 'rudder.buyer@example.com' }, page: { url: 'https://shop.example/thanks' } },
    })
    await client.flush()
    const request = world.seen.slice(seenBefore).find((r) => r.path === '/v1/batch')!
    expect(request.headers['content-encoding']).toBe('gzip')
    expect(request.headers.authorization).toBe(basicAuth(world.key))
    const [conversion] = await world.sql<{ message_id: string, standard_event: string, source: string }[]>(`select message_id, standard_event, source from conversions where order_id = 'rudder-9001'`)
    expect(conversion).toMatchObject({ standard_event: 'Purchase', source: 'segment' })
    await expect.poll(async () => (await deliveries(conversion!.message_id)).filter((d) => d.status === 'sent').length, { timeout: 20_000 }).toBe(8)
    expect(world.platforms.acceptedCounts()).toEqual(Object.fromEntries(PLATFORMS.map((name) => [name, 2])))
  })
})

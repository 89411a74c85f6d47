import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTestPlatform, testPlatform } from '../delivery/test-platform.ts'
import type { FakeServer } from '../fakes/server.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { sample, scrape } from '../metrics/scrape.ts'
import shopify from '../../adapters/sources/shopify/index.ts'
import { zapier } from '../../adapters/sources/automation/index.ts'

/**
 * Issue 25: an unsigned body is public (anyone with the cop_key sends one). Were a known messageId answered
 * `duplicate_delivery_skipped`, predictable ids such as `shopify-order-<n>` would reveal which orders a shop has.
 */
const SECRET = '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'
let app: TestApp
let fake: FakeServer
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const copKey = () => app.dcgate.context.sites.byId('shop')!.copKey

beforeAll(async () => {
  fake = await startFakeTestPlatform()
  app = await bootTestApp({
    plugins: ['intake'],
    sites: [{ id: 'shop', name: 'Shop', destinations: { testads: { baseUrl: fake.url, token: 'good' } }, sources: { shopify: { secret: SECRET }, zapier: {} } }],
  }, { adapters: [testPlatform, shopify, zapier], builtInPlugins })
})
afterAll(async () => {
  await app?.close()
  await fake?.close()
})

async function signedShopifyOrder(orderId: string): Promise<void> {
  const raw = readFileSync(new URL('../sources/fixtures/shopify-orders-paid.json', import.meta.url), 'utf8').replaceAll('820982911946154508', orderId)
  const response = await app.request(`/api/v1/conversions/shopify/${copKey()}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-shopify-topic': 'orders/paid', 'x-shopify-hmac-sha256': createHmac('sha256', SECRET).update(raw).digest('base64') },
    body: raw,
  })
  expect(response.status).toBe(200)
}
/** The answer an unsigned Zapier body gets, with its messageId and timing taken out: what may differ between two ids. */
async function unsignedAnswer(messageId: string): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await app.request(`/api/v1/conversions/zapier/${copKey()}`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'Purchase', messageId, properties: { value: 10, currency: 'EUR' } }),
  })
  const { duration_ms: _, events, ...body } = await response.json() as { duration_ms: number, events: { messageId: string }[] }
  return { status: response.status, body: { ...body, events: events.map(({ messageId: _id, ...event }) => event) } }
}

describe('an unsigned body naming a messageId already stored', () => {
  it('gets the answer of a new one, whether a signed order or another public body holds the id, and nothing new is stored', async () => {
    await signedShopifyOrder('820982911946188001')
    const fresh = await unsignedAnswer('shopify-order-820982911946188002')
    expect(fresh).toMatchObject({ status: 200, body: { accepted: true, events: [{ success: true, message: 'stored; delivering in the background' }] } })

    const duplicates = async () => sample(await scrape(app), 'dcgate_conversions_total', { source: 'zapier', outcome: 'duplicate' })
    const before = await duplicates()
    expect(await unsignedAnswer('shopify-order-820982911946188001')).toEqual(fresh)
    expect(await unsignedAnswer('shopify-order-820982911946188002')).toEqual(fresh)
    // The operator still sees them as repeats.
    expect(await duplicates()).toBe(before + 2)

    const stored = await sql<{ message_id: string, trust: string }[]>(
      'select message_id, trust from conversions where site_id = ? order by message_id, trust', ['shop'])
    expect(stored).toEqual([
      { message_id: 'shopify-order-820982911946188001', trust: 'trusted' },
      { message_id: 'shopify-order-820982911946188002', trust: 'public' },
    ])
  })
})

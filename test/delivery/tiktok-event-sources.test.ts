import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeTikTok, type FakeTikTok } from '../fakes/tiktok.ts'

// Issue 24 item 5: TikTok takes one event_source per request. Web, store and CRM conversions arriving together are
// batched apart by the core (the adapter's requestGroup) and reach TikTok in one request per source, each with its
// own event_source_id.
let app: TestApp
let tiktok: FakeTikTok
let key: string

beforeAll(async () => {
  tiktok = await startFakeTikTok()
  app = await bootTestApp({
    plugins: ['intake'],
    // A batch window long enough that the three conversions would share one request if the core did not split them.
    delivery: { workerIntervalMs: 25, batchWindowMs: 200 },
    sites: [{
      id: 'shop', name: 'Shop', domains: ['shop.example.com'],
      destinations: { tiktok: { pixelCode: tiktok.pixelCode, accessToken: tiktok.accessToken, baseUrl: tiktok.url, offlineEventSetId: tiktok.offlineEventSetId, crmEventSetId: tiktok.crmEventSetId } },
      events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead' }],
    }],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await tiktok?.close()
})

const post = (body: unknown) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify(body),
})

describe('TikTok event sources through the pipeline', () => {
  it('a web sale, a store sale and a TikTok lead sent at once reach TikTok in three requests, one per event source', async () => {
    const answers = await Promise.all([
      post({ event: 'Purchase', messageId: 'tt-web-1', properties: { value: 20, currency: 'EUR' }, context: { traits: { email: 'web@example.com' }, page: { url: 'https://shop.example.com/thanks' } } }),
      post({ event: 'Purchase', messageId: 'tt-store-1', properties: { value: 35, currency: 'EUR', channel: 'in_store' }, context: { traits: { email: 'store@example.com', phone: '+44 20 7946 0958' } } }),
      post({ event: 'qualified_lead', messageId: 'tt-crm-1', context: { traits: { email: 'lead@example.com' }, identifiers: { tt_lead_id: '7312345678901234567' } } }),
    ])
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202])
    await expect.poll(() => tiktok.events.length, { timeout: 5000 }).toBe(3)
    const bySource = Object.fromEntries(tiktok.batches.map((b) => [b.eventSource, { id: b.eventSourceId, events: b.data.map((e) => e.event_id) }]))
    expect(bySource).toEqual({
      web: { id: tiktok.pixelCode, events: ['tt-web-1'] },
      offline: { id: tiktok.offlineEventSetId, events: ['tt-store-1'] },
      crm: { id: tiktok.crmEventSetId, events: ['tt-crm-1'] },
    })
    expect(tiktok.batches).toHaveLength(3)
  })
})

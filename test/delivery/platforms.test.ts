import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'

// The done-when path: one conversion, posted as an integrator would, reaches Meta and Google Ads (their
// fakes check what the real APIs check) in the shape each accepts.
let app: TestApp
let meta: FakeMeta
let google: FakeGoogleAds
let key: string

beforeAll(async () => {
  meta = await startFakeMeta()
  google = await startFakeGoogleAds()
  app = await bootTestApp({
    plugins: ['intake', 'export'],
    delivery: { retryBaseMs: 40, retryMaxMs: 200, workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop',
      destinations: {
        meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url },
        google_ads: {
          customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
          refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111', Lead: '222' },
          baseUrl: google.url, oauthUrl: google.oauthUrl,
        },
      },
    }],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await meta?.close()
  await google?.close()
})

const post = (body: unknown) => app.request('/api/v1/conversions/automation', {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key }, body: JSON.stringify(body),
})

describe('a conversion delivered to Meta and Google Ads', () => {
  it('reaches both platforms in their accepted shapes and answers 202', async () => {
    const response = await post({
      event: 'Purchase', messageId: 'ord-9001', timestamp: Math.floor(Date.now() / 1000) - 60,
      properties: { value: 129.5, currency: 'EUR', order_id: '9001', items: [{ sku: 'A-1', quantity: 2, price: 64.75 }] },
      context: { traits: { email: 'Jane.Doe@Gmail.com', phone: '+44 20 7946 0958', first_name: 'Jane' }, identifiers: { gclid: 'Cj0KCQ-test', fbclid: 'IwAR-test' }, ip: '203.0.113.5', userAgent: 'Mozilla/5.0' },
    })
    expect(response.status).toBe(202)
    expect((await response.json() as { events: unknown[] }).events[0]).toMatchObject({ messageId: 'ord-9001', success: true, message: 'sent to 2 platforms' })

    expect(meta.events).toHaveLength(1)
    expect(meta.events[0]).toMatchObject({ event_name: 'Purchase', event_id: 'ord-9001', custom_data: expect.objectContaining({ value: 129.5, currency: 'EUR' }) })
    const userData = meta.events[0]!.user_data as Record<string, unknown>
    expect(userData.client_ip_address).toBe('203.0.113.5')
    expect(String(userData.fbc)).toMatch(/^fb\.1\.\d+\.IwAR-test$/)

    expect(google.conversions).toHaveLength(1)
    expect(google.conversions[0]).toMatchObject({ customerId: '1234567890', conversion: expect.objectContaining({ gclid: 'Cj0KCQ-test', conversionAction: 'customers/1234567890/conversionActions/111', conversionValue: 129.5, currencyCode: 'EUR' }) })
    const bodies = JSON.stringify([meta.requests, google.requests].flat().map((r) => r.body))
    for (const plain of ['Jane.Doe', 'jane.doe', 'gmail.com', '7946', 'Jane"']) expect(bodies).not.toContain(plain)
  })

  it('records a platform that has no conversion action for the event as skipped, and still sends to the other', async () => {
    const response = await post({ event: 'Schedule', messageId: 'call-1', context: { identifiers: { gclid: 'Cj0-sched', fbc: 'fb.1.1700000000000.abc' }, traits: { email: 'a@b.co' } } })
    expect(response.status).toBe(202)
    const rows = await app.dcgate.database.orm.em.getConnection().execute<{ provider: string, status: string, error: string | null }[]>(
      `select d.provider, d.status, d.error from deliveries d join conversions c on c.id = d.conversion_id where c.message_id = 'call-1' order by d.provider`)
    expect(rows).toEqual([
      { provider: 'google_ads', status: 'skipped', error: expect.stringContaining('Schedule') },
      { provider: 'meta', status: 'sent', error: null },
    ])
  })
})

describe('a revoked access token', () => {
  it('is replaced with a fresh one when the platform answers 401, and the conversion is sent', async () => {
    google.expireTokens()
    const tokensBefore = google.tokenRequests.length
    const response = await post({ event: 'Lead', messageId: 'lead-after-revoke', context: { identifiers: { gclid: 'Cj0-revoked' }, traits: { email: 'b@c.co' } } })
    expect((await response.json() as { events: { message: string }[] }).events[0]!.message).toBe('sent to 2 platforms')
    expect(google.tokenRequests.length).toBe(tokensBefore + 1)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// Issue 24's done-when: a burst an integrator's automation sends (200 conversions, 20 at a time) to a site with
// Meta and Google Ads. Meta takes 20 requests a second and Google 5, so most events wait for a later batch: dcgate's
// own queue is no failure, so every conversion answers 202 with success true, and each platform gets each once.
let app: TestApp
let meta: FakeMeta
let google: FakeGoogleAds
let key: string

beforeAll(async () => {
  [meta, google] = await Promise.all([startFakeMeta(), startFakeGoogleAds()])
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 100 },
    sites: [{
      id: 'shop', name: 'Shop', destinations: {
        meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url },
        google_ads: {
          customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
          refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111' }, baseUrl: google.url, oauthUrl: google.oauthUrl,
        },
      },
    }],
  })
  key = await app.createKey('shop', 'automation')
})
afterAll(async () => {
  await app?.close()
  await Promise.all([meta?.close(), google?.close()])
})

interface Answer { status: number, body: { events: { messageId: string, success: boolean, message: string, errors?: unknown[] }[] } }

async function purchase(id: string): Promise<Answer> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({
      event: 'Purchase', messageId: id, properties: { value: 42.5, currency: 'EUR', order_id: id },
      context: { traits: { email: `buyer-${id}@example.com` }, identifiers: { gclid: `Cj0-${id}` }, ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (burst)' },
    }),
  })
  return { status: response.status, body: await response.json() as Answer['body'] }
}

/** How many records of the fake carry this id. */
const copies = (records: readonly unknown[], id: string) => records.filter((record) => JSON.stringify(record).includes(`"${id}"`)).length

describe('a burst of 200 conversions, 20 at a time, to Meta and Google Ads', () => {
  it('answers 202 with success for every one, and each platform receives each exactly once', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `burst-${String(i).padStart(3, '0')}`)
    const answers: Answer[] = []
    for (let start = 0; start < ids.length; start += 20) answers.push(...await Promise.all(ids.slice(start, start + 20).map(purchase)))

    const refused = answers.filter((a) => a.status !== 202 || !a.body.events[0]!.success)
    expect(refused.map((a) => a.body.events[0])).toEqual([])
    for (const answer of answers) {
      // Sent to both now, or what was queued for the next batch named with its platform.
      expect(answer.body.events[0]!.message).toMatch(/^sent to 2 platforms$|queued: (meta|google_ads) takes at most \d+ requests a second/)
      expect(answer.body.events[0]!.errors).toBeUndefined()
    }
    await expect.poll(() => ids.filter((id) => copies(meta.events, id) === 1 && copies(google.conversions, id) === 1).length, { timeout: 20_000, interval: 250 }).toBe(200)
    expect(ids.filter((id) => copies(meta.events, id) !== 1 || copies(google.conversions, id) !== 1)).toEqual([])
  })
})

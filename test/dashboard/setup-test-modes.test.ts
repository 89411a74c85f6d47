import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startAllPlatforms, type AllPlatforms } from '../fakes/all-platforms.ts'
import { startFakeGa4, type FakeGa4 } from '../fakes/ga4.ts'
import { startFakeSnapchat, type FakeSnapchat } from '../fakes/snapchat.ts'
import { createBrowser, type Browser } from './support.ts'

// "Send test event" on every platform: each goes in the platform's documented test mode and is recorded as nothing
// real; a platform without a test mode says so and is not called.
let app: TestApp
let all: AllPlatforms
let ga4: FakeGa4
let snap: FakeSnapchat
let operator: Browser

beforeAll(async () => {
  ;[all, ga4, snap] = await Promise.all([startAllPlatforms(), startFakeGa4(), startFakeSnapchat()])
  app = await bootTestApp({
    plugins: ['capture', 'intake', 'release', 'dashboard'],
    sites: [
      { id: 'shop', name: 'Shop', domains: ['shop.example'], destinations: all.destinations },
      {
        id: 'more', name: 'More', domains: ['more.example'], destinations: {
          ga4: { measurementId: ga4.measurementId, apiSecret: ga4.apiSecret, baseUrl: ga4.url },
          snapchat: { pixelId: snap.pixelId, accessToken: snap.accessToken, baseUrl: snap.url },
        },
      },
    ],
  })
  operator = createBrowser(app)
  await operator.signInAsOperator(app.dcgate.adminToken)
}, 180_000)
afterAll(async () => {
  await app?.close()
  await Promise.all([all?.close(), ga4?.close(), snap?.close()])
})

async function sendTest(site: string, fields: Record<string, string>): Promise<{ kind: string, text: string }> {
  await operator.get(`/dashboard/sites/${site}/setup`)
  expect((await operator.post(`/dashboard/sites/${site}/setup/send-test-event`, { event: 'Purchase', ...fields })).status).toBe(303)
  const page = (await operator.get(`/dashboard/sites/${site}/setup`)).text
  const found = /<div class="flash (ok|error)" role="status"><p>([^<]*)<\/p>/.exec(page)
  return { kind: found?.[1] ?? '', text: (found?.[2] ?? '').replace(/&quot;/g, '"').replace(/&#39;/g, '\'').replace(/&amp;/g, '&') }
}

describe('Send test event, platform by platform', () => {
  it('sends each in its test mode, and nothing is recorded as a real conversion', async () => {
    const { meta, google, tiktok, reddit, pinterest } = all.fakes
    const before = all.acceptedCounts()

    expect(await sendTest('shop', { platform: 'tiktok', code: 'TEST12345' })).toMatchObject({ kind: 'ok' })
    expect(tiktok.batches.at(-1)?.testEventCode).toBe('TEST12345')
    expect(await sendTest('shop', { platform: 'reddit', code: 't2_testid' })).toMatchObject({ kind: 'ok' })
    expect(reddit.batches.at(-1)?.testId).toBe('t2_testid')
    expect(await sendTest('shop', { platform: 'pinterest' })).toMatchObject({ kind: 'ok' })
    expect(pinterest.requests.at(-1)?.path).toMatch(/\/events\?test=true$/)
    expect(await sendTest('shop', { platform: 'google_ads' })).toMatchObject({ kind: 'ok' })
    expect(google.ingests.at(-1)?.body.validateOnly).toBe(true)
    expect(await sendTest('shop', { platform: 'meta', code: 'TEST40211' })).toMatchObject({ kind: 'ok' })
    expect(meta.batches.at(-1)?.testEventCode).toBe('TEST40211')

    // Pinterest and Google record nothing of a test; Meta, TikTok and Reddit keep it apart, under the test code.
    const after = all.acceptedCounts()
    expect(after.pinterest).toBe(before.pinterest)
    expect(after.google_ads).toBe(before.google_ads)

    expect(await sendTest('more', { platform: 'snapchat' })).toMatchObject({ kind: 'ok' })
    expect(snap.validated).toHaveLength(1)
    expect(snap.events).toHaveLength(0)
    const checked = await sendTest('more', { platform: 'ga4' })
    expect(ga4.validated).toHaveLength(1)
    expect(ga4.collected).toHaveLength(0)
    expect(checked.text).toContain('Google Analytics')
  })

  it('says which platforms have no test mode, and calls none of them', async () => {
    const page = (await operator.get('/dashboard/sites/shop/setup')).text
    expect(page).toContain('No test mode: LinkedIn has no test flag')
    expect(page).toContain('No test mode: X has no test flag')
    expect(page).toContain('No test mode: the UET Conversions API has no test mode')
    const requests = all.requestCount()
    for (const platform of ['linkedin', 'x', 'microsoft_ads']) {
      const answer = await sendTest('shop', { platform })
      expect(answer.kind).toBe('error')
      expect(answer.text).toContain('no call answered')
    }
    expect(all.requestCount()).toBe(requests)
  })
})

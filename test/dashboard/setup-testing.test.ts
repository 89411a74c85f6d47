import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { startFakeMeta, type FakeMeta } from '../fakes/meta.ts'
import { createBrowser, uniqueEmail, uniqueIp, type Browser } from './support.ts'

// "Test before live" on the Setup page: Test connection, Send test event in each platform's test mode, and the plan
// of what each event sends where (or why a platform skips it), over HTTP as a browser uses them.
const OWNER = uniqueEmail('owner', 'shop.example')
const STRANGER = uniqueEmail('stranger', 'elsewhere.example')
let app: TestApp
let meta: FakeMeta
let google: FakeGoogleAds
let operator: Browser

beforeAll(async () => {
  ;[meta, google] = await Promise.all([startFakeMeta(), startFakeGoogleAds()])
  const googleAds = {
    customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret,
    refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111', Lead: '222' }, baseUrl: google.url, oauthUrl: google.oauthUrl,
  }
  app = await bootTestApp({
    server: { trustProxy: true, baseUrl: 'https://track.shop.example' },
    plugins: ['capture', 'intake', 'release', 'dashboard'],
    sites: [
      {
        id: 'demo', name: 'Demo shop', members: [OWNER], domains: ['shop.example'],
        events: [{ key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule' }],
        destinations: { meta: { pixelId: meta.pixelId, accessToken: meta.accessToken, baseUrl: meta.url }, google_ads: googleAds },
      },
      { id: 'broken', name: 'Broken shop', members: [STRANGER], destinations: { meta: { pixelId: meta.pixelId, accessToken: 'EAARevokedToken', baseUrl: meta.url } } },
    ],
  })
  operator = createBrowser(app)
  await operator.signInAsOperator(app.dcgate.adminToken)
}, 180_000)
afterAll(async () => {
  await app?.close()
  await Promise.all([meta?.close(), google?.close()])
})

/** The flash's kind and text, as the browser shows it (entities decoded). */
function flashOf(page: string): [string, string, string] | undefined {
  const found = /<div class="flash (ok|error)" role="status"><p>([^<]*)<\/p>/.exec(page)
  if (!found) return undefined
  const text = found[2]!.replace(/&quot;/g, '"').replace(/&#39;/g, '\'').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
  return [found[0], found[1]!, text]
}

async function act(browser: Browser, site: string, action: string, fields: Record<string, string>) {
  await browser.get(`/dashboard/sites/${site}/setup`)
  const posted = await browser.post(`/dashboard/sites/${site}/setup/${action}`, fields)
  expect(posted.status).toBe(303)
  const page = await browser.get(`/dashboard/sites/${site}/setup`)
  return flashOf(page.text)
}

describe('Setup page: testing a destination', () => {
  it('labels the buttons and explains why Google skips an event without a conversion action', async () => {
    const { status, text } = await operator.get('/dashboard/sites/demo/setup')
    expect(status).toBe(200)
    expect(text.match(/>Test connection<\/button>/g)).toHaveLength(2)
    expect(text.match(/>Send test event<\/button>/g)).toHaveLength(2)
    // The site's "Demo booked" sends as Schedule: Meta takes it, Google has no conversion action for it.
    const row = /<tr><td><code>demo_booked<\/code><\/td>.*?<\/tr>/s.exec(text)?.[0] ?? ''
    expect(row).toContain('sent as <code>Schedule</code>')
    expect(row).toContain('Skipped')
    expect(row).toContain('no Google Ads conversion action is configured for Schedule')
    const purchase = /<tr><td><code>Purchase<\/code><\/td>.*?<\/tr>/s.exec(text)?.[0] ?? ''
    expect(purchase.match(/sent as <code>Purchase<\/code>/g)).toHaveLength(2)
  })

  it('Test connection reads the Meta pixel and shows what Meta answered', async () => {
    const flash = await act(operator, 'demo', 'test-connection', { platform: 'meta' })
    expect(flash?.[1]).toBe('ok')
    expect(flash?.[2]).toContain('Meta · Test connection: OK (HTTP 200)')
    expect(flash?.[2]).toContain(`pixel ${meta.pixelId}`)
    const read = meta.requests.at(-1)!
    expect(read.method).toBe('GET')
    expect(read.path).toContain(`/${meta.pixelId}?fields=id,name`)
    expect(meta.batches).toHaveLength(0)
  })

  it('Test connection with a revoked token shows Meta\'s own error', async () => {
    const flash = await act(operator, 'broken', 'test-connection', { platform: 'meta' })
    expect(flash?.[1]).toBe('error')
    expect(flash?.[2]).toContain('failed (HTTP 401)')
    expect(flash?.[2]).toContain('Invalid OAuth access token - Cannot parse access token (code 190)')
  })

  it('Test connection to Google exchanges the refresh token and names the scope it holds', async () => {
    const flash = await act(operator, 'demo', 'test-connection', { platform: 'google_ads' })
    expect(flash?.[2]).toContain('Google Ads · Test connection: OK (HTTP 200)')
    expect(flash?.[2]).toContain('https://www.googleapis.com/auth/datamanager')
  })

  it('Send test event reaches Meta with the test event code and stores no conversion', async () => {
    const flash = await act(operator, 'demo', 'send-test-event', { platform: 'meta', event: 'Purchase', code: 'TEST40211' })
    expect(flash?.[1]).toBe('ok')
    expect(flash?.[2]).toContain('Meta · Send test event (Purchase): OK (HTTP 200)')
    expect(flash?.[2]).toMatch(/"events_received":1.*"fbtrace_id":"AFake\d+Trace"/)
    expect(meta.batches.at(-1)).toMatchObject({ testEventCode: 'TEST40211', data: [{ event_name: 'Purchase' }] })
    const stored = await app.admin('GET', '/sites/demo/deliveries')
    expect(stored.status).toBe(200)
    expect(((await stored.json()) as { deliveries: unknown[] }).deliveries).toHaveLength(0)
  })

  it('Send test event to Meta without a code sends nothing and says why', async () => {
    const before = meta.batches.length
    const flash = await act(operator, 'demo', 'send-test-event', { platform: 'meta', event: 'Purchase' })
    expect(flash?.[1]).toBe('error')
    expect(flash?.[2]).toContain('test event code')
    expect(meta.batches).toHaveLength(before)
  })

  it('Send test event reaches Google with validateOnly: true, and Google records nothing', async () => {
    const flash = await act(operator, 'demo', 'send-test-event', { platform: 'google_ads', event: 'Lead' })
    expect(flash?.[1]).toBe('ok')
    expect(flash?.[2]).toContain('Google Ads · Send test event (Lead): OK (HTTP 200)')
    expect(google.ingests.at(-1)?.body).toMatchObject({ validateOnly: true, destinations: [{ productDestinationId: '222' }] })
    expect(google.conversions).toHaveLength(0)
  })

  it('a test event Google would skip is not sent, and the page says why', async () => {
    const before = google.ingests.length
    const flash = await act(operator, 'demo', 'send-test-event', { platform: 'google_ads', event: 'Schedule' })
    expect(flash?.[2]).toContain('not sent: no Google Ads conversion action is configured for Schedule')
    expect(google.ingests).toHaveLength(before)
  })

  it('refuses a member of another site, and a platform the site does not have', async () => {
    const stranger = createBrowser(app)
    await stranger.signInAsMember(STRANGER)
    await stranger.get('/dashboard/sites/broken/setup')
    expect((await stranger.post('/dashboard/sites/demo/setup/test-connection', { platform: 'meta' })).status).toBe(403)
    const flash = await act(operator, 'demo', 'test-connection', { platform: 'tiktok' })
    expect(flash?.[2]).toBe('This site has no such destination.')
  })

  it('limits how many tests one person runs in a minute', async () => {
    const busy = createBrowser(app, uniqueIp())
    await busy.signInAsOperator(app.dcgate.adminToken)
    await busy.get('/dashboard/sites/broken/setup')
    for (let i = 0; i < 10; i++) await busy.post('/dashboard/sites/broken/setup/test-connection', { platform: 'meta' })
    const flash = await act(busy, 'broken', 'test-connection', { platform: 'meta' })
    expect(flash?.[2]).toMatch(/^Too many tests in a minute; try again in \d+ s\.$/)
  })
})

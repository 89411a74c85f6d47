import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import googleAds from '../../adapters/ads/google-ads/index.ts'
import { toUpdate } from '../../core/delivery/diagnostics.ts'
import type { AdPlatformDefinition } from '../../core/registry.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeGoogleAds, type FakeGoogleAds } from '../fakes/google-ads.ts'
import { rows, signIn } from '../dashboard/pages-client.ts'

// Issue 24 item 5: Google's request diagnostics are read back and shown in the delivery report, and a request Google
// accepted and then rejected turns its delivery `failed` with Google's words. The fake answers requestStatus:retrieve
// PROCESSING once, then the final status; a click id it cannot use fails in processing (EVENT_TOO_OLD).
let app: TestApp
let google: FakeGoogleAds
let key: string

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const report = async () => ((await (await app.admin('GET', '/sites/shop/deliveries')).json()) as { deliveries: Record<string, any>[] }).deliveries
const googleRow = async (messageId: string) => (await report()).find((d) => d.message_id === messageId && d.provider === 'google_ads')

async function purchase(messageId: string, gclid: string): Promise<void> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({ event: 'Purchase', messageId, timestamp: new Date(Date.now() - 3_600_000).toISOString(), properties: { value: 30, currency: 'EUR', order_id: messageId }, context: { identifiers: { gclid } } }),
  })
  expect(response.status).toBe(202)
  await expect.poll(async () => (await googleRow(messageId))?.status, { timeout: 15_000 }).toBe('sent')
}

/** As if Google's 30 minutes had passed: every look is due now. */
const lookNow = () => sql(`update delivery_diagnostics set due_at = now() where due_at is not null`)

beforeAll(async () => {
  google = await startFakeGoogleAds({ processingLooks: 1, processingError: (event) => event.adIdentifiers?.gclid === 'Cj0KCQ-expired' ? 'PROCESSING_ERROR_REASON_EVENT_TOO_OLD' : undefined })
  app = await bootTestApp({
    // The dashboard's browser stand-in signs in from an address of its own (X-Forwarded-For).
    server: { trustProxy: true },
    plugins: ['intake', 'dashboard'],
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop',
      destinations: { google_ads: { customerId: '123-456-7890', clientId: google.credentials.clientId, clientSecret: google.credentials.clientSecret, refreshToken: google.credentials.refreshToken, conversionActions: { Purchase: '111' }, baseUrl: google.url, oauthUrl: google.oauthUrl } },
    }],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await google?.close()
})

describe('Google\'s delayed diagnostics in the delivery report', () => {
  it('keeps the request id, looks 30 minutes later, and backs off while Google is still processing', async () => {
    await purchase('diag-ok', 'Cj0KCQ-fine')
    const [row] = await sql<{ receipt: string, due_in_minutes: number }[]>(
      `select g.receipt, extract(epoch from g.due_at - now()) / 60 as due_in_minutes from delivery_diagnostics g join deliveries d on d.id = g.delivery_id join conversions c on c.id = d.conversion_id where c.message_id = 'diag-ok'`)
    expect(google.ingests.some((i) => i.status === 200)).toBe(true)
    expect(row!.receipt).toMatch(/^[0-9a-f-]{36}$/)
    expect(Number(row!.due_in_minutes)).toBeGreaterThan(29)
    expect(Number(row!.due_in_minutes)).toBeLessThanOrEqual(30)

    // Half an hour on, the access token the conversion went with may be gone: Google answers 401, and the look asks
    // for a fresh one, as a delivery does.
    google.expireTokens()
    await lookNow()
    await expect.poll(async () => (await googleRow('diag-ok'))?.diagnosis, { timeout: 15_000 }).toBe('Google Ads is still processing the request')
    const [next] = await sql<{ due_in_minutes: number }[]>(`select extract(epoch from due_at - now()) / 60 as due_in_minutes from delivery_diagnostics where diagnosis like '%still processing%'`)
    expect(Number(next!.due_in_minutes)).toBeGreaterThan(29)

    await lookNow()
    await expect.poll(async () => (await googleRow('diag-ok'))?.diagnosis, { timeout: 15_000 }).toBe('Google processed the request: SUCCESS (conversion action 111, 1 event in the request)')
    expect(await googleRow('diag-ok')).toMatchObject({ status: 'sent', error: null })
    expect(await sql(`select due_at from delivery_diagnostics where diagnosis like 'Google processed%'`)).toEqual([{ due_at: null }])
    // The dashboard's Deliveries page shows it as the reason of the sent row.
    const operator = await signIn(app)
    const page = await operator.get('/dashboard/sites/shop/deliveries')
    expect(rows(page.text).find((cells) => cells.some((cell) => cell.includes('diag-ok')))?.join(' ')).toContain('Google processed the request: SUCCESS')
  })

  it('a conversion Google accepted and then rejected ends failed, in Google\'s words', async () => {
    await purchase('diag-late', 'Cj0KCQ-expired')
    await lookNow()
    await expect.poll(async () => (await googleRow('diag-late'))?.diagnosis, { timeout: 15_000 }).toContain('still processing')
    await lookNow()
    const words = 'Google rejected the event after accepting the request: FAILED (conversion action 111, 1 event in the request): PROCESSING_ERROR_REASON_EVENT_TOO_OLD ×1 (The conversion is older than max supported age.)'
    await expect.poll(async () => (await googleRow('diag-late'))?.status, { timeout: 15_000 }).toBe('failed')
    expect(await googleRow('diag-late')).toMatchObject({ status: 'failed', error: words, diagnosis: words })
    // A failed delivery can be replayed from the report: it goes again, with a new request id to look at.
    const { id } = (await googleRow('diag-late'))!
    expect((await app.admin('POST', '/sites/shop/deliveries/retry', { id })).status).toBe(200)
    await expect.poll(async () => (await googleRow('diag-late'))?.status, { timeout: 15_000 }).toBe('sent')
    await expect.poll(async () => (await googleRow('diag-late'))?.diagnosis, { timeout: 15_000 }).toBeNull()
  })

  it('stops looking after 72 hours without a final answer, and says so', () => {
    const platform = googleAds as AdPlatformDefinition<unknown>
    const row = { delivery_id: 'd1', site_id: 'shop', provider: 'google_ads', receipt: 'r', conversion_id: 'c', status: 'sent' }
    const now = Date.now()
    const early = toUpdate({ ...row, requested_at: new Date(now - 2 * 3_600_000) }, { status: 'processing' }, platform, now)
    expect(early).toMatchObject({ due_at: new Date(now + 2 * 3_600_000).toISOString(), failed: null })
    expect(toUpdate({ ...row, requested_at: new Date(now - 73 * 3_600_000) }, { status: 'processing' }, platform, now)).toEqual({
      delivery_id: 'd1', due_at: null, failed: null, diagnosis: 'Google Ads is still processing the request; no final answer 73 hours after the request, so it is no longer looked at',
    })
  })
})

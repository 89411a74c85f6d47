import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RefundedConversion } from '../../core/hooks.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import type { FakeGoogleAds } from '../fakes/google-ads.ts'
import { startRefundPlatforms, type RefundPlatforms } from './adjust-support.ts'

// Issue 18 item 2: a refund counted against a delivered conversion (the `conversion:refunded` hook) is told to the
// platforms that take refunds, in their current API's shape, and the delivery report says which ones do not. Here Google
// Ads has the Google Ads API's credentials (`adjustments.refreshToken`, the fake's token carries both scopes), so its
// refunds are retracted and restated through UploadConversionAdjustments (issue 24 item 3; the default Data Manager
// path is adjust-shopify.test.ts).
let app: TestApp
let google: FakeGoogleAds
let platforms: RefundPlatforms
let key: string

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

/** A Purchase with a Google click, sent inline to both platforms; answers its conversion id. */
async function purchase(orderId: string, value: number): Promise<string> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dc-key': key },
    body: JSON.stringify({
      event: 'Purchase', messageId: `order-${orderId}`, timestamp: new Date(Date.now() - 3_600_000).toISOString(),
      properties: { value, currency: 'EUR', order_id: orderId },
      context: { traits: { email: `buyer-${orderId}@example.com` }, identifiers: { gclid: `Cj0KCQ-${orderId}` }, ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)', page: { url: 'https://shop.example/checkout' } },
    }),
  })
  expect(response.status).toBeLessThan(300)
  const [row] = await sql<{ id: string }[]>('select id from conversions where message_id = ?', [`order-${orderId}`])
  await expect.poll(async () => (await sql<{ status: string }[]>(`select status from deliveries where conversion_id = ? and kind = 'conversion'`, [row!.id]))
    .map((d) => d.status), { timeout: 15_000 }).toEqual(['sent', 'sent'])
  return row!.id
}

/** What the refund engineer's route does once a refund is counted: the row is marked, then the hook is called. */
async function refund(conversionId: string, orderId: string, refundId: string, amount?: number): Promise<void> {
  if (amount !== undefined) await sql('update conversions set refunded_value = coalesce(refunded_value, 0) + ? where id = ?', [amount, conversionId])
  const payload: RefundedConversion = { siteId: 'shop', orderId, refundId, at: new Date(), conversionIds: [conversionId], ...(amount !== undefined ? { amount, currency: 'EUR' } : {}) }
  await app.dcgate.hooks.callHook('conversion:refunded', payload)
}

const report = async () => ((await (await app.admin('GET', '/sites/shop/deliveries')).json()) as { deliveries: Record<string, any>[] }).deliveries

beforeAll(async () => {
  platforms = await startRefundPlatforms({ googleOptions: (fake) => ({ adjustments: { refreshToken: fake.credentials.refreshToken } }) })
  google = platforms.google
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [{
      id: 'shop', name: 'Shop',
      destinations: platforms.destinations,
    }],
  })
  key = await app.createKey('shop')
})
afterAll(async () => {
  await app?.close()
  await platforms?.close()
})

describe('a refund of a delivered conversion', () => {
  it('a full refund reaches Google as a RETRACTION of the order id it was sent under; Meta\'s row says it is not supported', async () => {
    const id = await purchase('3001', 120)
    await refund(id, '3001', 'refund-1')
    await expect.poll(() => google.adjustments.length, { timeout: 15_000 }).toBe(1)
    const [upload] = google.adjustmentUploads
    expect(upload!.body).toEqual({
      partialFailure: true,
      conversionAdjustments: [{
        conversionAction: 'customers/1234567890/conversionActions/111', adjustmentType: 'RETRACTION', orderId: 'order-3001',
        adjustmentDateTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\+00:00$/),
      }],
    })
    // The Google Ads API: a bearer token with the adwords scope; no developer token is configured here.
    expect(upload!.headers.authorization).toMatch(/^Bearer ya29\./)

    await expect.poll(async () => (await report()).filter((d) => d.kind === 'adjustment' && d.message_id === 'order-3001').map((d) => [d.provider, d.status]).sort(), { timeout: 15_000 })
      .toEqual([['google_ads', 'sent'], ['meta', 'skipped']])
    const rows = (await report()).filter((d) => d.kind === 'adjustment' && d.message_id === 'order-3001')
    expect(rows.find((d) => d.provider === 'meta')).toMatchObject({ refund_id: 'refund-1', adjustment_type: 'retraction', error: expect.stringContaining('not supported by Meta') })
    expect(rows.find((d) => d.provider === 'google_ads')).toMatchObject({ refund_id: 'refund-1', adjustment_type: 'retraction', http_status: 200, error: null })
  })

  it('a partial refund reaches Google as a RESTATEMENT with the value left', async () => {
    const id = await purchase('3002', 100)
    await refund(id, '3002', 'refund-2', 30)
    await expect.poll(() => google.adjustments.filter((a) => a.adjustment.orderId === 'order-3002').length, { timeout: 15_000 }).toBe(1)
    expect(google.adjustments.find((a) => a.adjustment.orderId === 'order-3002')!.adjustment).toMatchObject({
      adjustmentType: 'RESTATEMENT', restatementValue: { adjustedValue: 70, currencyCode: 'EUR' },
    })
  })

  it('a refund told twice (a retried webhook, a second hook call) is written and sent once', async () => {
    const id = await purchase('3003', 50)
    await refund(id, '3003', 'refund-3')
    await refund(id, '3003', 'refund-3')
    expect(await sql(`select provider from deliveries where conversion_id = ? and kind = 'adjustment' order by provider`, [id])).toEqual([{ provider: 'google_ads' }, { provider: 'meta' }])
    await expect.poll(async () => (await sql<{ status: string }[]>(`select status from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'google_ads'`, [id]))[0]?.status, { timeout: 15_000 }).toBe('sent')
    // A later refund of another order goes through the same worker: had a second row existed, it would have gone too.
    const other = await purchase('3004', 10)
    await refund(other, '3004', 'refund-4')
    await expect.poll(() => google.adjustments.filter((a) => a.adjustment.orderId === 'order-3004').length, { timeout: 15_000 }).toBe(1)
    expect(google.adjustments.filter((a) => a.adjustment.orderId === 'order-3003')).toHaveLength(1)
    expect(google.adjustmentUploads.flatMap((u) => u.body.conversionAdjustments).filter((a: any) => a.orderId === 'order-3003')).toHaveLength(1)
  })

  it('a conversion Google never recorded is refused CONVERSION_NOT_FOUND and retried later, not failed at once', async () => {
    const id = await purchase('3005', 40)
    // Google lost it: the fake forgets the conversion, as an upload still being processed would look.
    google.conversions.splice(google.conversions.findIndex((c) => c.conversion.orderId === 'order-3005'), 1)
    await refund(id, '3005', 'refund-5')
    await expect.poll(async () => (await sql<{ status: string, error: string | null }[]>(`select status, error from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'google_ads'`, [id]))[0], { timeout: 15_000 })
      .toMatchObject({ status: 'retrying', error: expect.stringContaining('CONVERSION_NOT_FOUND') })
    const [row] = await sql<{ due_in_minutes: number }[]>(`select extract(epoch from next_attempt_at - now()) / 60 as due_in_minutes from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'google_ads'`, [id])
    expect(Number(row!.due_in_minutes)).toBeGreaterThan(50)
  })

  it('waits while the conversion is still on its way to the platform, and is sent once it was delivered', async () => {
    const id = await purchase('3006', 80)
    // As if Google's delivery were between retries: the refund must not overtake the conversion.
    await sql(`update deliveries set status = 'retrying', next_attempt_at = now() + interval '1 hour' where conversion_id = ? and kind = 'conversion' and provider = 'google_ads'`, [id])
    await refund(id, '3006', 'refund-6')
    const adjustment = () => sql<{ status: string, error: string | null }[]>(`select status, error from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'google_ads'`, [id]).then((rows) => rows[0])
    await expect.poll(adjustment, { timeout: 15_000 }).toMatchObject({ status: 'pending', error: 'waits until the conversion is delivered to Google Ads' })
    expect(google.adjustments.filter((a) => a.adjustment.orderId === 'order-3006')).toEqual([])

    await sql(`update deliveries set status = 'sent' where conversion_id = ? and kind = 'conversion' and provider = 'google_ads'`, [id])
    await sql(`update deliveries set next_attempt_at = now() where conversion_id = ? and kind = 'adjustment' and provider = 'google_ads'`, [id])
    await expect.poll(async () => (await adjustment())?.status, { timeout: 15_000 }).toBe('sent')
    expect(google.adjustments.filter((a) => a.adjustment.orderId === 'order-3006')).toHaveLength(1)
  })

  it('a refund of a conversion Google refused is recorded as nothing to adjust, never sent', async () => {
    const id = await purchase('3007', 25)
    await sql(`update deliveries set status = 'failed' where conversion_id = ? and kind = 'conversion' and provider = 'google_ads'`, [id])
    await refund(id, '3007', 'refund-7')
    expect(await sql(`select status, error from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'google_ads'`, [id]))
      .toEqual([{ status: 'skipped', error: 'refund not sent: the conversion was not delivered to Google Ads (failed), so there is nothing to adjust' }])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RefundedConversion } from '../../core/hooks.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { microsoftErrors, startFakeMicrosoftAds, type FakeMicrosoftAds } from '../fakes/microsoft-ads.ts'
import type { AdjustmentEvent, ConversionEvent } from '../../core/delivery/types.ts'
import { toOnlineAdjustment, type MicrosoftAdjustmentOptions } from '../../adapters/ads/microsoft-ads/map-adjustments.ts'
import { parseOnlineAdjustmentsResponse } from '../../adapters/ads/microsoft-ads/response-adjustments.ts'

// Issue 18 item 2, Microsoft Advertising: a refund of a conversion delivered through the UET Conversions API is told
// to the Campaign Management API's ApplyOnlineConversionAdjustments, by the transaction id the event carried.
let app: TestApp
let microsoft: FakeMicrosoftAds
const keys: Record<string, string> = {}

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

/** A Purchase with an email and an order id, sent inline to Microsoft; answers its conversion id. */
async function purchase(siteId: string, orderId: string, value: number): Promise<string> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dc-key': keys[siteId]! },
    body: JSON.stringify({
      event: 'Purchase', messageId: `ms-order-${orderId}`, timestamp: new Date(Date.now() - 3_600_000).toISOString(),
      properties: { value, currency: 'EUR', order_id: orderId },
      context: { traits: { email: `buyer-${orderId}@shop.example` }, ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11; Linux x86_64)', page: { url: 'https://shop.example/checkout' } },
    }),
  })
  expect(response.status).toBeLessThan(300)
  const [row] = await sql<{ id: string }[]>('select id from conversions where message_id = ?', [`ms-order-${orderId}`])
  await expect.poll(async () => (await sql<{ status: string }[]>(`select status from deliveries where conversion_id = ? and kind = 'conversion'`, [row!.id]))
    .map((d) => d.status), { timeout: 15_000 }).toEqual(['sent'])
  return row!.id
}

/** What the refund routes do once a refund is counted: the row is marked, then the hook is called. */
async function refund(siteId: string, conversionId: string, orderId: string, refundId: string, amount?: number): Promise<void> {
  if (amount !== undefined) await sql('update conversions set refunded_value = coalesce(refunded_value, 0) + ? where id = ?', [amount, conversionId])
  const payload: RefundedConversion = { siteId, orderId, refundId, at: new Date(), conversionIds: [conversionId], ...(amount !== undefined ? { amount, currency: 'EUR' } : {}) }
  await app.dcgate.hooks.callHook('conversion:refunded', payload)
}

const adjustmentRow = (conversionId: string) => sql<{ status: string, error: string | null, attempts: number }[]>(
  `select status, error, attempts from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'microsoft_ads'`, [conversionId])
const appliedFor = (orderId: string) => microsoft.adjustments.filter((a) => a.TransactionId === orderId)

beforeAll(async () => {
  microsoft = await startFakeMicrosoftAds()
  const uet = { tagId: microsoft.tagId, apiToken: microsoft.apiToken, baseUrl: microsoft.url }
  const adjustments = { ...microsoft.campaign, conversionNames: { Purchase: 'Purchases' }, apiUrl: microsoft.url, oauthUrl: microsoft.oauthUrl }
  app = await bootTestApp({
    plugins: ['intake'],
    delivery: { workerIntervalMs: 25 },
    sites: [
      { id: 'shop', name: 'Shop', destinations: { microsoft_ads: { ...uet, adjustments } } },
      { id: 'wrongtoken', name: 'Wrong developer token', destinations: { microsoft_ads: { ...uet, adjustments: { ...adjustments, developerToken: 'NOT-THE-TOKEN' } } } },
      { id: 'bare', name: 'Conversions only', destinations: { microsoft_ads: uet } },
      { id: 'nogoal', name: 'No goal name', destinations: { microsoft_ads: { ...uet, adjustments: { ...adjustments, conversionNames: {} } } } },
    ],
  })
  for (const site of ['shop', 'wrongtoken', 'bare', 'nogoal']) keys[site] = await app.createKey(site)
})
afterAll(async () => {
  await app?.close()
  await microsoft?.close()
})

describe('a refund of a conversion delivered to Microsoft Advertising', () => {
  it('a full refund is applied as a Retract of the transaction id, with the Campaign Management headers and an msads.manage token', async () => {
    const id = await purchase('shop', '5001', 120)
    await refund('shop', id, '5001', 'ms-refund-1')
    await expect.poll(async () => (await adjustmentRow(id))[0]?.status, { timeout: 15_000 }).toBe('sent')
    expect(appliedFor('5001')).toEqual([{ AdjustmentType: 'Retract', ConversionName: 'Purchases', TransactionId: '5001', AdjustmentTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/) }])
    const call = microsoft.adjustmentCalls.find((c) => c.body?.OnlineConversionAdjustments?.some((a: any) => a.TransactionId === '5001'))!
    expect(call.headers).toMatchObject({ developertoken: microsoft.campaign.developerToken, customerid: microsoft.campaign.customerId, customeraccountid: microsoft.campaign.accountId, authenticationtoken: expect.stringMatching(/^EwB/) })
    expect(microsoft.tokenRequests[0]).toMatchObject({ grant_type: 'refresh_token', client_id: microsoft.campaign.clientId, scope: expect.stringContaining('https://ads.microsoft.com/msads.manage') })
  })

  it('a partial refund is applied as a Restate with the value left and its currency', async () => {
    const id = await purchase('shop', '5002', 100)
    await refund('shop', id, '5002', 'ms-refund-2', 30)
    await expect.poll(() => appliedFor('5002').length, { timeout: 15_000 }).toBe(1)
    expect(appliedFor('5002')[0]).toMatchObject({ AdjustmentType: 'Restate', AdjustmentValue: 70, AdjustmentCurrencyCode: 'EUR' })
  })

  it('a refund told twice (a retried webhook) is written and applied once', async () => {
    const id = await purchase('shop', '5003', 50)
    await refund('shop', id, '5003', 'ms-refund-3')
    await refund('shop', id, '5003', 'ms-refund-3')
    expect(await adjustmentRow(id)).toHaveLength(1)
    await expect.poll(async () => (await adjustmentRow(id))[0]?.status, { timeout: 15_000 }).toBe('sent')
    // A later refund goes through the same worker: a second row for 5003 would have been sent by now too.
    const other = await purchase('shop', '5004', 10)
    await refund('shop', other, '5004', 'ms-refund-4')
    await expect.poll(() => appliedFor('5004').length, { timeout: 15_000 }).toBe(1)
    expect(microsoft.adjustmentCalls.flatMap((c) => c.body?.OnlineConversionAdjustments ?? []).filter((a: any) => a.TransactionId === '5003')).toHaveLength(1)
  })

  it('a transaction Microsoft does not know comes back as a partial error, shown in the delivery report', async () => {
    const id = await purchase('shop', '5005', 40)
    // Microsoft lost it: the fake forgets the event, so Apply answers a BatchError for its index.
    for (const batch of microsoft.batches) batch.data = batch.data.filter((event) => (event.customData as any)?.transactionId !== '5005')
    await refund('shop', id, '5005', 'ms-refund-5')
    await expect.poll(async () => (await adjustmentRow(id))[0], { timeout: 15_000 })
      .toMatchObject({ status: 'failed', error: expect.stringContaining('OnlineConversionNotFound') })
    const report = ((await (await app.admin('GET', '/sites/shop/deliveries')).json()) as { deliveries: Record<string, any>[] }).deliveries
    expect(report.find((d) => d.kind === 'adjustment' && d.provider === 'microsoft_ads' && d.message_id === 'ms-order-5005'))
      .toMatchObject({ refund_id: 'ms-refund-5', adjustment_type: 'retraction', status: 'failed', error: expect.stringContaining('No online conversion with this transaction id') })
    expect(appliedFor('5005')).toEqual([])
  })

  it('a throttle (CallRateExceeded) is retried after a minute, not failed', async () => {
    const id = await purchase('shop', '5006', 60)
    microsoft.queueAdjustment(microsoftErrors.callRateExceeded())
    await refund('shop', id, '5006', 'ms-refund-6')
    await expect.poll(async () => (await adjustmentRow(id))[0], { timeout: 15_000 }).toMatchObject({ status: 'retrying', error: expect.stringContaining('CallRateExceeded') })
    const [row] = await sql<{ due_in_seconds: number }[]>(`select extract(epoch from next_attempt_at - now()) as due_in_seconds from deliveries where conversion_id = ? and kind = 'adjustment' and provider = 'microsoft_ads'`, [id])
    expect(Number(row!.due_in_seconds)).toBeGreaterThan(40)
    await sql(`update deliveries set next_attempt_at = now() where conversion_id = ? and kind = 'adjustment' and provider = 'microsoft_ads'`, [id])
    await expect.poll(async () => (await adjustmentRow(id))[0]?.status, { timeout: 15_000 }).toBe('sent')
    expect(appliedFor('5006')).toHaveLength(1)
  })

  it('refused credentials (code 105) fail the refund with what to check', async () => {
    const id = await purchase('wrongtoken', '5007', 70)
    await refund('wrongtoken', id, '5007', 'ms-refund-7')
    await expect.poll(async () => (await adjustmentRow(id))[0], { timeout: 15_000 })
      .toMatchObject({ status: 'failed', error: expect.stringMatching(/InvalidCredentials.*adjustments\.developerToken/) })
    expect(appliedFor('5007')).toEqual([])
  })

  it('without the Campaign Management options the refund is skipped, naming the options it needs', async () => {
    const id = await purchase('bare', '5008', 80)
    await refund('bare', id, '5008', 'ms-refund-8')
    await expect.poll(async () => (await adjustmentRow(id))[0], { timeout: 15_000 }).toMatchObject({
      status: 'skipped',
      error: 'refund not sent: Microsoft Advertising takes refunds through the Campaign Management API, which needs adjustments.clientId, adjustments.refreshToken, adjustments.developerToken, adjustments.customerId, adjustments.accountId, adjustments.conversionNames.Purchase (README "Refunds")',
    })
    const other = await purchase('nogoal', '5009', 90)
    await refund('nogoal', other, '5009', 'ms-refund-9')
    await expect.poll(async () => (await adjustmentRow(other))[0], { timeout: 15_000 }).toMatchObject({
      status: 'skipped', error: expect.stringMatching(/which needs adjustments\.conversionNames\.Purchase \(/),
    })
    expect(microsoft.adjustmentCalls.flatMap((c) => c.body?.OnlineConversionAdjustments ?? []).filter((a: any) => ['5008', '5009'].includes(a.TransactionId))).toEqual([])
  })
})

describe('the pure mapping and answer reading', () => {
  const conversion = { standardEvent: 'Purchase', orderId: '42', occurredAt: new Date('2026-11-20T10:00:00.500Z') } as ConversionEvent
  const settings = { conversionNames: { Purchase: 'Purchases' } } as MicrosoftAdjustmentOptions
  const item = (adjustment: AdjustmentEvent['adjustment']): AdjustmentEvent => ({ conversion, adjustment })
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    parseOnlineAdjustmentsResponse({ status, headers: new Headers(headers), body: typeof body === 'string' ? body : JSON.stringify(body) }, [item({ type: 'retraction', refundId: 'r', at: new Date() }), item({ type: 'retraction', refundId: 's', at: new Date() })])

  it('a refund stamped before the sale is moved to one second after it; a Retract carries no value', () => {
    expect(toOnlineAdjustment(item({ type: 'retraction', refundId: 'r', at: new Date('2026-11-20T09:59:00Z'), value: 5, currency: 'EUR' }), settings))
      .toEqual({ AdjustmentType: 'Retract', AdjustmentTime: '2026-11-20T10:00:01Z', ConversionName: 'Purchases', TransactionId: '42' })
  })

  it('reads hostile or partial answers without throwing, one outcome per item', () => {
    expect(answer(200, { PartialErrors: null })).toEqual([{ status: 'sent' }, { status: 'sent' }])
    // An index outside the request, or an entry that is not an object, is not trusted to refuse anything.
    expect(answer(200, { PartialErrors: [{ Index: 7, Message: 'x' }, 'junk', { Index: -1 }] })).toEqual([{ status: 'sent' }, { status: 'sent' }])
    expect(answer(200, { PartialErrors: [{ Index: 1, Code: 7, ErrorCode: 'OnlineConversionNotFound', Message: 'not found' }] }))
      .toEqual([{ status: 'sent' }, { status: 'rejected', message: expect.stringContaining('OnlineConversionNotFound, code 7: not found') }])
    expect(answer(502, '<html>Bad gateway</html>').map((o) => o.status)).toEqual(['retry', 'retry'])
    expect(answer(401, '').map((o) => o.status)).toEqual(['rejected', 'rejected'])
    expect(answer(400, { Type: 'ApiFaultDetail', BatchErrors: [{ Index: 1, Code: 1, ErrorCode: 'Invalid', Message: 'bad' }], OperationErrors: [] }).map((o) => o.status)).toEqual(['retry', 'rejected'])
    expect(answer(400, { Type: 'ApiFaultDetail', OperationErrors: [{ Code: 117, ErrorCode: 'CallRateExceeded', Message: 'slow down' }] })).toEqual([
      { status: 'retry', message: expect.stringContaining('CallRateExceeded'), retryAfterMs: 60_000 }, { status: 'retry', message: expect.stringContaining('CallRateExceeded'), retryAfterMs: 60_000 }])
  })
})

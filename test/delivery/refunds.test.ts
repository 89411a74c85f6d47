import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { recordRefund } from '../../core/delivery/queries/refunds.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { getPage, insertConversions, sqlOf } from '../export/support.ts'

let app: TestApp
const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

async function storeOrder(orderId: string, value: number | null, trust = 'trusted'): Promise<void> {
  await sql(`insert into conversions (id, site_id, message_id, trust, source, event, occurred_at, value, currency, order_id, channel, confirmation, state)
    values (gen_random_uuid(), 'demo', ?, ?, 'shopify', 'purchase', now(), ?, 'EUR', ?, 'web', 'payment_confirmed', 'accepted')`,
  [`order-${orderId}-${trust}`, trust, value, orderId])
}
const marks = (orderId: string) => sql<{ trust: string, refunded_at: Date | null, refunded_value: number | null, refund_ids: string[] | null }[]>(
  `select trust, refunded_at, refunded_value, refund_ids from conversions where order_id = ? order by trust desc`, [orderId])
const refund = (orderId: string, refundId: string, amount?: number, at = new Date('2026-11-20T10:00:00Z')) =>
  recordRefund(app.dcgate.context.prepared, 'demo', { orderId, refundId, amount, at })

let key: string
beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export'] })
  key = await app.createKey('demo')
})
const exported = async () => (await getPage(app, key, '/api/v1/export/conversions', {})).body.data as Record<string, unknown>[]
afterAll(async () => {
  await app?.close()
})

describe('recording a refund against the stored order', () => {
  it('a partial refund adds its amount and the first refund time; a retried refund id counts once', async () => {
    await storeOrder('1001', 100)
    expect(await refund('1001', 'r1', 30)).toBe('applied')
    expect(await refund('1001', 'r1', 30)).toBe('repeat')
    expect(await refund('1001', 'r2', 20, new Date('2026-11-21T10:00:00Z'))).toBe('applied')
    const [row] = await marks('1001')
    expect(row).toMatchObject({ refunded_value: 50, refund_ids: ['r1', 'r2'] })
    expect(new Date(row!.refunded_at!).toISOString()).toBe('2026-11-20T10:00:00.000Z')
  })

  it('a refund with no amount (a cancellation) refunds the whole value, and refunds never exceed it', async () => {
    await storeOrder('1002', 80)
    expect(await refund('1002', 'r1', 50)).toBe('applied')
    expect(await refund('1002', 'cancel')).toBe('applied')
    expect(await refund('1002', 'r3', 50)).toBe('applied')
    expect((await marks('1002'))[0]!.refunded_value).toBe(80)
  })

  it('the trusted purchase and a public copy of the same order are both marked', async () => {
    await storeOrder('1003', 60)
    await storeOrder('1003', 60, 'public')
    expect(await refund('1003', 'r1', 10)).toBe('applied')
    expect((await marks('1003')).map((r) => [r.trust, r.refunded_value])).toEqual([['trusted', 10], ['public', 10]])
  })

  it('an order the site never sent is reported unknown and nothing changes', async () => {
    expect(await refund('no-such-order', 'r1', 10)).toBe('unknown_order')
    expect(await sql('select 1 from conversions where refunded_at is not null and order_id = ?', ['no-such-order'])).toEqual([])
  })
})

describe('the export of a refunded order', () => {
  it('shows refunded: true and the first refund time, and keeps the value sold', async () => {
    const id = '00000000-0000-4000-8000-000000000501'
    await insertConversions(sqlOf(app), [{ id, siteId: 'demo', createdAt: '2026-11-01T00:00:00Z', orderId: 'E-501', deliveries: [['meta', 'sent']] }])
    expect((await exported()).find((r) => r.id === id)).toMatchObject({ refunded: false, refunded_at: null, value: 42.5 })
    await refund('E-501', 'r1', 10, new Date('2026-11-02T08:30:00.123Z'))
    expect((await exported()).find((r) => r.id === id)).toMatchObject({ refunded: true, refunded_at: '2026-11-02T08:30:00.123000Z', value: 42.5 })
  })
})

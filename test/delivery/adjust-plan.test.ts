import { describe, expect, it } from 'vitest'
import { planAdjustments, refundKey, toAdjustment } from '../../core/delivery/adjust.ts'
import type { AdPlatformDefinition } from '../../core/registry.ts'

// The pure part of telling refunds to the platforms: which rows a refund adds, and what each says.
const at = new Date('2026-11-22T10:00:00Z')
const withRefunds = { name: 'google_ads', label: 'Google Ads', adjustments: {} } as unknown as AdPlatformDefinition<unknown>
const without = { name: 'meta', label: 'Meta' } as unknown as AdPlatformDefinition<unknown>
const row = (provider: string, status: string) => ({ conversion_id: 'c1', site_id: 'shop', provider, status, value: 100, currency: 'EUR', refunded_value: 30 })

describe('planAdjustments', () => {
  it('a platform that takes refunds gets a pending row; one without, a skipped row saying so; one no longer configured, none', () => {
    const rows = planAdjustments({ siteId: 'shop', orderId: 'o1', refundId: 'r1', amount: 30, at, conversionIds: ['c1'] },
      [row('google_ads', 'sent'), row('meta', 'sent'), row('tiktok', 'sent')],
      (_site, provider) => ({ google_ads: withRefunds, meta: without } as Record<string, AdPlatformDefinition<unknown>>)[provider])
    expect(rows.map((r) => [r.provider, r.status, r.error])).toEqual([
      ['google_ads', 'pending', null],
      ['meta', 'skipped', 'refund not sent: not supported by Meta (its API documents no refund or negative value)'],
    ])
    expect(rows[0]!.adjustment).toEqual({ type: 'restatement', refundId: 'r1', at: at.toISOString(), value: 70, currency: 'EUR' })
  })

  it('a conversion the platform never received has nothing to adjust', () => {
    const [planned] = planAdjustments({ siteId: 'shop', orderId: 'o1', refundId: 'r1', at, conversionIds: ['c1'] }, [row('google_ads', 'skipped')], () => withRefunds)
    expect(planned).toMatchObject({ status: 'skipped', error: 'refund not sent: the conversion was not delivered to Google Ads (skipped), so there is nothing to adjust' })
  })
})

describe('toAdjustment', () => {
  it('retracts a refund without an amount, a conversion without a value, and refunds that reach the value', () => {
    expect(toAdjustment({ refundId: 'r', at }, { value: 100, currency: 'EUR', refunded_value: 100 }).type).toBe('retraction')
    expect(toAdjustment({ refundId: 'r', amount: 10, at }, { value: null, currency: null, refunded_value: null }).type).toBe('retraction')
    expect(toAdjustment({ refundId: 'r', amount: 60, at }, { value: 100, currency: 'EUR', refunded_value: 100 }).type).toBe('retraction')
  })

  it('restates a partial refund with the value left, rounded to cents', () => {
    expect(toAdjustment({ refundId: 'r', amount: 0.1, at }, { value: 0.3, currency: 'USD', refunded_value: 0.1 })).toMatchObject({ type: 'restatement', value: 0.2, currency: 'USD' })
  })
})

describe('refundKey', () => {
  it('keeps an id that fits the column and hashes a longer one, the same way every time', () => {
    expect(refundKey('re_3N9')).toBe('re_3N9')
    const long = 'x'.repeat(300)
    expect(refundKey(long)).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(refundKey(long)).toBe(refundKey(long))
  })
})

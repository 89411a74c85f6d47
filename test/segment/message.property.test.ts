import fc from 'fast-check'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { ConversionRequest } from '../../core/intake/conversion-request.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { siteEventFor, toAutomationBody } from '../../plugins/segment/message.ts'
import { SHOP_EVENTS } from './support.ts'

// The mapping is pure and total: whatever a message holds in any field, it gives a body the automation schema
// either takes or refuses with named problems; it never throws (a throw would be a 500).
const ORDER = {
  type: 'track', event: 'Order Completed', messageId: 'm-1', userId: 'u-1', timestamp: '2026-11-26T03:00:00Z', sentAt: '2026-11-26T03:00:01Z', originalTimestamp: '2026-11-26T03:00:00Z',
  properties: { order_id: 'o-1', revenue: 10, total: 12, currency: 'EUR', products: [{ product_id: 'p', price: 5, quantity: 2 }], fbp: 'fb.1.1.1' },
  context: { ip: '203.0.113.1', userAgent: 'UA', traits: { email: 'a@example.com', address: { city: 'Oslo' } }, page: { url: 'https://x.example/?gclid=g', search: '?fbclid=f' }, campaign: { gclid: 'c' }, consent: { categoryPreferences: {} } },
}
const PATHS = [
  [], ['timestamp'], ['originalTimestamp'], ['sentAt'], ['messageId'], ['userId'], ['anonymousId'], ['properties'], ['properties', 'revenue'], ['properties', 'total'],
  ['properties', 'currency'], ['properties', 'order_id'], ['properties', 'products'], ['properties', 'products', 0], ['context'], ['context', 'traits'],
  ['context', 'traits', 'address'], ['context', 'ip'], ['context', 'page'], ['context', 'page', 'url'], ['context', 'page', 'search'], ['context', 'campaign'], ['context', 'consent'],
] as const

function replaced(path: readonly (string | number)[], value: unknown): Record<string, unknown> {
  if (path.length === 0) return (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { value }) as Record<string, unknown>
  const copy = structuredClone(ORDER) as Record<string, any>
  let node = copy
  for (const key of path.slice(0, -1)) node = node[key]
  node[path.at(-1)!] = value
  return copy
}

describe('a Segment track message as the automation body', () => {
  it('never throws, whatever a field holds', () => {
    fc.assert(fc.property(fc.constantFrom(...PATHS), fc.jsonValue({ maxDepth: 3 }), (path, value) => {
      const body = toAutomationBody(replaced(path, value), 'order_completed', { batchSentAt: value, receivedAt: new Date() })
      const result = v.safeParse(ConversionRequest, body)
      if (!result.success) expect(result.issues.length).toBeGreaterThan(0)
    }), { numRuns: 1000 })
  })

  it('finds the site event for a Segment event name, by key written from the name, without case', () => {
    const site = resolveConfig({ sites: [{ id: 'shop', name: 'Shop', events: [...SHOP_EVENTS, { key: 'lead_form', name: 'Lead', sendsAs: 'Lead', active: false }] }] }, {}).sites[0]!
    expect(siteEventFor(site, 'Order Completed')).toBe('order_completed')
    expect(siteEventFor(site, '  order-completed ')).toBeUndefined()
    expect(siteEventFor(site, 'ORDER COMPLETED!')).toBe('order_completed')
    expect(siteEventFor(site, 'Purchase')).toBe('Purchase')
    expect(siteEventFor(site, 'Lead Form')).toBeUndefined()
    expect(siteEventFor(site, 'Product Viewed')).toBeUndefined()
  })
})

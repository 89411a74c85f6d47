import { describe, expect, it } from 'vitest'
import type { AnsweredRequest } from '../../core/http/answered.ts'
import { SiteRing } from '../../plugins/dashboard/live/site-ring.ts'

// What waits for the live events' next write: a site's newest requests only (the table keeps no more), oldest
// first, each as it was answered.
const answered = (n: number, extra: Partial<AnsweredRequest> = {}): AnsweredRequest => ({
  siteId: 'shop', at: new Date(1_700_000_000_000 + n), method: 'POST', route: '/collect', status: 202, ...extra,
})
/** As the ring hands it over: with its time in ms beside the Date. */
const handed = (n: number, extra: Partial<AnsweredRequest> = {}) => ({ ...answered(n, extra), atMs: 1_700_000_000_000 + n })

describe('a site ring of live events', () => {
  it('hands over the newest requests, oldest first, however many came', () => {
    for (const count of [0, 1, 15, 16, 17, 499, 500, 501, 1234]) {
      const ring = new SiteRing(500)
      for (let n = 0; n < count; n++) ring.push(answered(n))
      const taken = ring.take('shop')
      const first = Math.max(0, count - 500)
      expect(taken.map((r) => r.at.getTime() - 1_700_000_000_000)).toEqual(Array.from({ length: count - first }, (_, i) => first + i))
      expect(ring.empty).toBe(true)
    }
  })

  it('keeps the refusal, the source and a batch part as answered, and nothing a later request had', () => {
    const ring = new SiteRing(500)
    ring.push(answered(1, { status: 403, code: 'ORIGIN', message: 'Origin https://x.example is not one of the site\'s domains' }))
    ring.push(answered(2, { route: '/api/v1/conversions/:source/:api_key', source: 'stripe', status: 200, partlyRefused: { refused: 1, reasons: ['bad'] } }))
    ring.push(answered(3))
    expect(ring.take('shop')).toEqual([
      handed(1, { status: 403, code: 'ORIGIN', message: 'Origin https://x.example is not one of the site\'s domains' }),
      handed(2, { route: '/api/v1/conversions/:source/:api_key', source: 'stripe', status: 200, partlyRefused: { refused: 1, reasons: ['bad'] } }),
      handed(3),
    ])
  })

  it('orders requests answered within one millisecond a few microseconds apart, as they came', () => {
    const ring = new SiteRing(500)
    for (const status of [202, 403, 400]) ring.push(answered(5, { status }))
    ring.push(answered(4)) // a clock that stepped back still sorts after what came before
    const taken = ring.take('shop')
    expect(taken.map((r) => r.status)).toEqual([202, 403, 400, 202])
    const times = taken.map((r) => r.atMs - 1_700_000_000_000)
    expect(times[0]).toBe(5)
    // Apart by at least a microsecond, which the table's timestamptz(6) keeps.
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(0.001)
    expect(times.at(-1)).toBeLessThan(5.01)
  })

  it('starts again empty after a hand-over, and wraps without losing order', () => {
    const ring = new SiteRing(20)
    for (let n = 0; n < 37; n++) ring.push(answered(n))
    expect(ring.take('shop').map((r) => r.at.getTime() % 1000)).toEqual(Array.from({ length: 20 }, (_, i) => 17 + i))
    for (let n = 100; n < 103; n++) ring.push(answered(n, { status: 400 }))
    expect(ring.take('shop').map((r) => [r.at.getTime() % 1000, r.status])).toEqual([[100, 400], [101, 400], [102, 400]])
  })
})

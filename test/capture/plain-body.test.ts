import fc from 'fast-check'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { plainCollectBody } from '../../plugins/capture/plain-body.ts'
import { CLICK_ID_KEYS, CollectBody } from '../../plugins/capture/protocol.ts'

// The hand check on /collect's hot path against the schema it stands in for: on bodies near the edges of every
// rule, it never accepts a body the schema refuses, and what it returns is what the schema outputs. It must also
// accept the bodies the script sends, or it would be no help.

/** Mostly valid, sometimes not: a body is then often valid as a whole, and every rule is still crossed. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) => fc.oneof({ weight: 15, arbitrary: valid }, { weight: 1, arbitrary: invalid })
/** A string up to a length limit, sometimes just over it. */
const text = (limit: number) => mostly(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(limit - 1, limit).map((n) => 'x'.repeat(n))), fc.constant('x'.repeat(limit + 1)))
const id = mostly(fc.stringMatching(/^[A-Za-z0-9_-]{8,64}$/), fc.constantFrom('short', 'x'.repeat(65), 'has space 123', ''))
const count = mostly(fc.nat(), fc.constantFrom(-1, 1.5, 1e400))
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })
const junk = fc.constantFrom(null, 'x', 1, true, [])
const withExtraKey = <T extends object>(arb: fc.Arbitrary<T>) => mostly(arb, arb.map((o) => ({ ...o, extra: 1 })))

const pageview = fc.record({ t: fc.constant('pageview'), hid: maybe(id), ts: count, url: text(4096), ref: maybe(text(4096)), title: maybe(text(500)) }, { requiredKeys: ['t', 'ts', 'url'] })
const propKey = mostly(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('order_id', 'content_name', 'content_category')), fc.constantFrom('x'.repeat(101), '__proto__', 'constructor'))
const propValue = mostly(fc.oneof(fc.string({ maxLength: 10 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)), fc.constantFrom('x'.repeat(1001), 'x'.repeat(256), 'x'.repeat(501), { nested: 1 }, [1], 1e400))
const props = mostly(fc.dictionary(propKey, propValue, { maxKeys: 4 }), fc.constant(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]))))
const event = fc.record({ t: fc.constant('event'), hid: maybe(id), ts: count, url: text(4096), name: mostly(text(255), fc.constant('')), props: maybe(props), id: maybe(mostly(text(255), fc.constant(''))) }, { requiredKeys: ['t', 'ts', 'url', 'name'] })
const hit = mostly(fc.oneof(pageview, event), fc.oneof(fc.record({ t: fc.constant('other'), ts: fc.nat(), url: fc.string() }), junk))
const hits = mostly(fc.array(withExtraKey(hit as fc.Arbitrary<object>), { minLength: 1, maxLength: 3 }), fc.constantFrom([], Array.from({ length: 51 }, () => ({ t: 'pageview', ts: 1, url: 'u' }))))
const clickIds = mostly(fc.dictionary(mostly(fc.constantFrom(...CLICK_ID_KEYS), fc.constantFrom('nope', '__proto__')), mostly(text(500), fc.constant(1)), { maxKeys: 3 }), junk)
const signals = mostly(withExtraKey(fc.record({
  webdriver: maybe(mostly(fc.boolean(), fc.constant('yes'))),
  headless: maybe(mostly(fc.array(text(64), { maxLength: 3 }), fc.constantFrom(Array.from({ length: 21 }, () => 'h'), [1]))),
  interactions: maybe(count),
  firstInteractionMs: maybe(count),
  sinceLoadMs: maybe(count),
}, { requiredKeys: [] })), junk)
const device = mostly(withExtraKey(fc.record({
  hash: mostly(fc.stringMatching(/^[0-9a-f]{64}$/), fc.constantFrom('A'.repeat(64), 'a'.repeat(63))),
  short: mostly(fc.stringMatching(/^[0-9a-f]{12}$/), fc.constant('abc')),
  confidence: mostly(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(-0.1, 1.1)),
  version: mostly(fc.integer({ min: 1, max: 3 }), fc.constantFrom(0, 1.5)),
})), junk)

const body = withExtraKey(fc.record({
  v: mostly(fc.constant(1), fc.constantFrom(2, '1', null)),
  sid: maybe(id),
  vid: maybe(id),
  hits,
  clickIds: maybe(clickIds),
  consent: maybe(mostly(fc.constantFrom('granted', 'denied', 'unknown'), fc.constantFrom('maybe', null))),
  signals: maybe(signals),
  device: maybe(device),
  screen: maybe(mostly(fc.record({ w: count, h: count }), junk)),
  lang: maybe(mostly(text(35), fc.constant(1))),
  tz: maybe(mostly(text(64), fc.constant(1))),
}, { requiredKeys: ['v', 'hits'] }))

/** Through JSON, as a request body arrives (undefined keys vanish, 1e400 becomes Infinity as JSON.parse gives it). */
const asReceived = (value: unknown) => JSON.parse(JSON.stringify(value, (_key, x) => (x === Infinity ? '__inf__' : x)).replaceAll('"__inf__"', '1e400')) as unknown

describe('the hand check of /collect bodies', () => {
  it('never accepts what the schema refuses, and returns what the schema outputs', () => {
    let accepted = 0
    fc.assert(fc.property(body, (generated) => {
      const plain = plainCollectBody(asReceived(generated))
      const schema = v.safeParse(CollectBody, asReceived(generated))
      if (plain === undefined) return
      accepted++
      expect(schema.success, JSON.stringify(generated).slice(0, 300)).toBe(true)
      expect(plain).toEqual(schema.output)
    }), { numRuns: 5000 })
    expect(accepted).toBeGreaterThan(250) // the generator reaches the accepting side too
  })

  it('accepts the bodies the script sends', () => {
    const scripted = [
      { v: 1, sid: 'AbCdEfGhIjKlMnOpQrStUv', vid: 'vIsItOr_0001-abcdefgh', hits: [{ t: 'pageview', hid: 'hit-00000001', ts: 1_763_000_000_000, url: 'https://shop.example/?gclid=abc', ref: 'https://www.google.com/', title: 'Shop' }], consent: 'granted', clickIds: { gclid: 'abc', fbp: 'fb.1.1.2' }, signals: { webdriver: false, interactions: 3, firstInteractionMs: 800, sinceLoadMs: 2000 }, device: { hash: 'a'.repeat(64), short: 'a'.repeat(12), confidence: 0.9, version: 1 }, screen: { w: 1920, h: 1080 }, lang: 'en-US', tz: 'Europe/Berlin' },
      { v: 1, hits: [{ t: 'event', hid: 'hit-00000002', ts: 1_763_000_000_000, url: 'https://shop.example/cart', name: 'Purchase', props: { value: 49.9, currency: 'EUR', gift: false, note: null }, id: 'order-1' }] },
      { v: 1, sid: 'AbCdEfGhIjKlMnOpQrStUv', consent: 'denied', hits: [{ t: 'pageview', hid: 'hit-00000003', ts: 1, url: 'https://shop.example/' }] },
    ]
    for (const sent of scripted) {
      const plain = plainCollectBody(asReceived(sent))
      expect(plain).toEqual(v.parse(CollectBody, asReceived(sent)))
    }
  })
})

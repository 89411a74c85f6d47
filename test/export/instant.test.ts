import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { between, formatInstant, MAX_TIE, parseInstant, positionOf, tieToUuid, type Position } from '../../plugins/export/paging/instant.ts'

// The continuation format on its own: a position (time to the microsecond, UUID as tiebreak) written as an ISO 8601
// timestamp whose fraction digits past the microsecond carry the tiebreak.
const positionArb = fc.record({
  micros: fc.bigInt({ min: -30_000_000_000_000_000n, max: 200_000_000_000_000_000n }),
  tie: fc.oneof(fc.bigInt({ min: 0n, max: MAX_TIE }), fc.constantFrom(0n, 1n, MAX_TIE)),
})
const compare = (a: Position, b: Position) => (a.micros === b.micros ? Number(a.tie > b.tie) - Number(a.tie < b.tie) : Number(a.micros > b.micros) - Number(a.micros < b.micros))

describe('positions as timestamps', () => {
  it('read back exactly what was written', () => {
    fc.assert(fc.property(positionArb, (p) => {
      expect(parseInstant(formatInstant(p))).toEqual(p)
    }))
  })

  it('order as real numbers of seconds: the written fraction compares like (time, id)', () => {
    fc.assert(fc.property(positionArb, positionArb, (p, q) => {
      const [a, b] = [formatInstant(p), formatInstant(q)]
      // Same second: the longer fraction, zero-padded, compares digit by digit like the numbers do.
      if (a.slice(0, 19) === b.slice(0, 19)) {
        const width = Math.max(a.length, b.length)
        const [fa, fb] = [a.slice(20, -1).padEnd(width, '0'), b.slice(20, -1).padEnd(width, '0')]
        expect(Math.sign(fa.localeCompare(fb))).toBe(compare(p, q))
      }
      else {
        expect(Math.sign(Date.parse(a) - Date.parse(b))).toBe(compare(p, q))
      }
    }))
  })

  const orderedPair = fc.tuple(positionArb, positionArb).filter(([p, q]) => compare(p, q) !== 0).map(([p, q]) => (compare(p, q) < 0 ? [p, q] : [q, p]))
  const sameMicro = fc.tuple(positionArb, fc.bigInt({ min: 0n, max: MAX_TIE }), fc.bigInt({ min: 0n, max: MAX_TIE }))
    .filter(([, a, b]) => a !== b).map(([p, a, b]) => [{ micros: p.micros, tie: a < b ? a : b }, { micros: p.micros, tie: a < b ? b : a }])

  it('next_since lies after the last record returned and at or before the next one', () => {
    fc.assert(fc.property(fc.oneof(orderedPair, sameMicro), ([last, next]) => {
      const since = between(last!, next!)
      expect(compare(since, last!)).toBe(1)
      expect(compare(since, next!)).toBeLessThanOrEqual(0)
      expect(parseInstant(formatInstant(since))).toEqual(since)
    }))
  })

  it('next_since is a plain microsecond timestamp unless the two records share their microsecond', () => {
    fc.assert(fc.property(orderedPair, ([last, next]) => {
      const text = formatInstant(between(last!, next!))
      if (last!.micros !== next!.micros) expect(text).toMatch(/\.\d{6}Z$/)
    }))
    // Random UUIDs of one microsecond differ early: a few tiebreak digits tell them apart.
    expect(formatInstant(between(positionOf('2026-05-01T12:00:00.5Z', '3f000000-0000-4000-8000-000000000000'), positionOf('2026-05-01T12:00:00.5Z', '9a000000-0000-4000-8000-000000000000'))))
      .toBe('2026-05-01T12:00:00.5000001Z')
  })

  it('any ISO parser reads a continuation whose fraction has up to 9 digits as its millisecond', () => {
    fc.assert(fc.property(fc.oneof(orderedPair, sameMicro), ([last, next]) => {
      const since = between(last!, next!)
      const text = formatInstant(since)
      const millis = since.micros / 1000n - (since.micros % 1000n < 0n ? 1n : 0n)
      // JavaScript's Date drops leading zeros of a fraction longer than 9 digits (docs/api/export.md).
      if (text.length <= 30 || text[20] !== '0') expect(Date.parse(text)).toBe(Number(millis))
    }))
  })

  it('a record\'s position comes from its time and UUID', () => {
    const uuid = 'ffffffff-ffff-ffff-ffff-ffffffffffff'
    const p = positionOf('2026-01-31T12:00:00.123456Z', uuid)
    expect(p.tie).toBe(MAX_TIE)
    expect(tieToUuid(p.tie)).toBe(uuid)
    expect(formatInstant(between(p, positionOf('2026-01-31T12:00:00.123457Z', '00000000-0000-0000-0000-000000000000')))).toBe('2026-01-31T12:00:00.123457Z')
    expect(formatInstant(between(positionOf('2026-01-31T12:00:00.123456Z', '00000000-0000-0000-0000-000000000000'), positionOf('2026-01-31T12:00:00.123456Z', '00000000-0000-0000-0000-000000000001'))))
      .toBe('2026-01-31T12:00:00.123456000000000000000000000000000000000000001Z')
  })
})

describe('what since and until accept', () => {
  it.each([
    ['2026-01-31', '2026-01-31T00:00:00.000000Z'],
    ['2026-01-31T12:00Z', '2026-01-31T12:00:00.000000Z'],
    ['2026-01-31T12:00:00', '2026-01-31T12:00:00.000000Z'],
    ['2026-01-31 12:00:00.5', '2026-01-31T12:00:00.500000Z'],
    ['2026-01-31T14:00:00.1+02:00', '2026-01-31T12:00:00.100000Z'],
    ['2026-01-31T06:30:00,25-0530', '2026-01-31T12:00:00.250000Z'],
    ['2026-01-31T13:00:00+01', '2026-01-31T12:00:00.000000Z'],
    ['2024-02-29T23:59:59.999999Z', '2024-02-29T23:59:59.999999Z'],
    // Between two positions means the later one: digits past the 45th round up, a tiebreak past the largest UUID
    // moves to the next microsecond.
    [`2026-01-31T12:00:00.000000${'0'.repeat(39)}1Z`, '2026-01-31T12:00:00.000000000000000000000000000000000000000000001Z'],
    ['2026-01-31T12:00:00.0000009Z', '2026-01-31T12:00:00.000001Z'],
  ])('%s is %s', (text, expected) => {
    expect(formatInstant(parseInstant(text)!)).toBe(expected)
  })

  it.each(['', 'now', '2026-1-31', '2026-02-30', '2023-02-29', '2026-01-31T24:00:00Z', '2026-01-31T12:60Z', '2026-01-31T12:00:60Z',
    '2026-01-31T12:00:00+24:00', '2026-01-31T12:00:00+02:60', '2026-01-31T12:00:00.Z', '0000-01-01', '2026-01-31T12', `2026-01-31T12:00:00.${'1'.repeat(90)}Z`,
  ])('%j is refused', (text) => {
    expect(parseInstant(text)).toBeNull()
  })
})

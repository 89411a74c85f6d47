import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_JSON_DEPTH, cleanJsonText, inspectJson, mayHoldUnstorableText, nestsTooDeep, toStorableText, unstorableReason } from '../../core/http/text.ts'

// The check every route runs on its input (core/http/text.ts). The quick test of the raw JSON must never miss text
// the walk would refuse (else such text reaches PostgreSQL), and cleaning the JSON text must give what cleaning
// each decoded string gives.

/** Strings made of the characters that matter here, mixed with ordinary ones. */
const hostileString = fc.array(fc.oneof(
  fc.constantFrom('\0', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D\uDE00', '\\', '\\u0000', '"', 'é', '😀'),
  fc.integer({ min: 0, max: 0xFFFF }).map((code) => String.fromCharCode(code)),
  fc.string({ maxLength: 4 }),
), { maxLength: 12 }).map((parts) => parts.join(''))

const hostileJson = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, hostileString, fc.integer(), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(hostileString, tie('value'), { maxKeys: 4 }),
})).value

describe('the check for text PostgreSQL cannot store', () => {
  it('names NUL characters and unpaired surrogates, and passes well-formed text', () => {
    expect(unstorableReason('a\0b')).toBe('contains a NUL character')
    expect(unstorableReason('cut \uD83D')).toBe('contains an unpaired surrogate (half of a UTF-16 pair)')
    expect(unstorableReason('\uDE00 cut')).toBe('contains an unpaired surrogate (half of a UTF-16 pair)')
    expect(unstorableReason('whole 😀, é, \\u0000 written out')).toBeUndefined()
  })

  it('names the field that holds one, by its path, keys included, without repeating the value', () => {
    const body = { event: 'Lead', properties: { note: 'a\0b', items: [{ name: 'ok' }, { name: '\uD800' }] }, context: { 'bad\0key': 1 } }
    expect(inspectJson(body, { strings: true }).sort()).toEqual([
      'context: has a key that contains a NUL character',
      'properties.items[1].name: contains an unpaired surrogate (half of a UTF-16 pair)',
      'properties.note: contains a NUL character',
    ])
    expect(inspectJson({ cop_key: 'x\0' }, { strings: true, prefix: 'query' })).toEqual(['query.cop_key: contains a NUL character'])
    expect(inspectJson('\0', { strings: true })).toEqual(['body: contains a NUL character'])
  })

  it('refuses nesting past the limit by the top field, without overflowing the stack on half a million levels', () => {
    const deep = JSON.parse(`{"event":"Lead","properties":${'['.repeat(500_000)}${']'.repeat(500_000)}}`)
    expect(inspectJson(deep, { strings: false })).toEqual([`properties: nests deeper than ${MAX_JSON_DEPTH} levels`])
    const atLimit = JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)
    expect(inspectJson(atLimit, { strings: false })).toEqual([])
    expect(inspectJson({ a: JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`) }, { strings: false })).toEqual([`a: nests deeper than ${MAX_JSON_DEPTH} levels`])
  })

  it('the route table\'s quick depth check agrees with the walk at the limit', () => {
    // Bodies pass on nestsTooDeep alone; inspectJson is asked only when it says too deep.
    const nested = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`)
    for (const value of [nested(MAX_JSON_DEPTH), { a: nested(MAX_JSON_DEPTH - 1) }, nested(MAX_JSON_DEPTH + 1), { a: nested(MAX_JSON_DEPTH) }, JSON.parse(`{"event":"Lead","properties":${'['.repeat(500_000)}${']'.repeat(500_000)}}`)]) {
      expect(nestsTooDeep(value)).toBe(inspectJson(value, { strings: false }).length > 0)
    }
  })

  it('the quick test of the raw JSON never misses what the walk would refuse', () => {
    fc.assert(fc.property(hostileJson, (value) => {
      const json = JSON.stringify(value)
      if (inspectJson(value, { strings: true }).length > 0) expect(mayHoldUnstorableText(json)).toBe(true)
    }), { numRuns: 2000 })
  })

  it('cleaning the JSON text decodes to every string cleaned, keys included, and leaves nothing to refuse', () => {
    const cleanDeep = (value: unknown): unknown => {
      if (typeof value === 'string') return toStorableText(value)
      if (Array.isArray(value)) return value.map(cleanDeep)
      if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [toStorableText(k), cleanDeep(v)]))
      return value
    }
    fc.assert(fc.property(hostileJson, (value) => {
      const cleaned = JSON.parse(cleanJsonText(JSON.stringify(value)))
      expect(inspectJson(cleaned, { strings: true })).toEqual([])
      // Two keys that differ only by a NUL become one: the later wins in both.
      expect(cleaned).toEqual(cleanDeep(value))
    }), { numRuns: 2000 })
  })

  it('needs no look for a raw NUL in valid JSON: JSON has none, in a string or between values', () => {
    for (const text of ['{"a":"x\0"}', '{"a":1}\0', '\0{"a":1}', '{"a":\u00001}', '{"a\0":1}']) expect(() => JSON.parse(text)).toThrow(SyntaxError)
  })

  it('cleans as toWellFormed does, and removes NULs, raw or escaped', () => {
    expect(JSON.parse(cleanJsonText('{"title":"cut \\ud83d","ok":"\\ud83d\\ude00","n\\u0000":"a\\u0000b","lit":"\\\\u0000"}')))
      .toEqual({ title: 'cut \uFFFD', ok: '😀', n: 'ab', lit: '\\u0000' })
    expect(cleanJsonText('{"a":"x\0y"}')).toBe('{"a":"xy"}')
    expect(cleanJsonText('{"a":"\\u00zz"}')).toBe('{"a":"\\u00zz"}')
  })
})

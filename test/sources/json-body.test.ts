import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { SourceInputError } from '../../core/registry.ts'
import { quoteUnsafeIntegers, readJsonObject } from '../../adapters/sources/json-body.ts'
import { clickIdsFrom } from '../../adapters/sources/click-ids.ts'

const read = (text: string) => readJsonObject(new TextEncoder().encode(text), { bigIntegersAsText: true })

describe('reading webhook bodies', () => {
  it('keeps integers beyond 2^53 as their digits, and leaves every other number and every string alone', () => {
    expect(read('{"id":820982911946154508,"neg":-9223372036854775807,"safe":9007199254740991,"price":12.5,"exp":1e21,"text":"id: 820982911946154508, ok","esc":"a\\"b 123456789012345678901"}')).toEqual({
      id: '820982911946154508', neg: '-9223372036854775807', safe: 9007199254740991, price: 12.5, exp: 1e21, text: 'id: 820982911946154508, ok', esc: 'a"b 123456789012345678901',
    })
    expect(read('{"ids":[18446744073709551615, 1],"nested":{"n":12345678901234567890}}')).toEqual({ ids: ['18446744073709551615', 1], nested: { n: '12345678901234567890' } })
  })

  it('property: JSON without unsafe integers comes through byte for byte', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const text = JSON.stringify(value)
      const unsafe = /(?<![\d.eE+-])-?\d{16,}(?![\d.eE])/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'))
      if (!unsafe) expect(quoteUnsafeIntegers(text)).toBe(text)
    }), { numRuns: 1000 })
  })

  it('names what is wrong with a body it cannot read', () => {
    const problem = (text: string | Uint8Array) => {
      try {
        readJsonObject(typeof text === 'string' ? new TextEncoder().encode(text) : text)
      }
      catch (error) {
        expect(error).toBeInstanceOf(SourceInputError)
        return (error as SourceInputError).message
      }
    }
    expect(problem('')).toBe('body: is empty; expected a JSON object')
    expect(problem('{"a":')).toBe('body: must be valid JSON')
    expect(problem('[1]')).toBe('body: must be a JSON object')
    expect(problem(new Uint8Array([0xFF, 0xFE]))).toBe('body: must be UTF-8 text')
    expect(readJsonObject(new TextEncoder().encode('\uFEFF{"ok":true}'))).toEqual({ ok: true })
  })
})

describe('click ids from name/value pairs', () => {
  it('matches names case-insensitively, with or without leading underscores, and reads cookie forms', () => {
    expect(clickIdsFrom([['GCLID', 'a'], ['__fbp', 'fb.1.2.3'], ['_gcl_aw', 'GCL.1700000000.Cj0x'], ['_uetmsclkid', 'ms'], ['sccid', 'snap'], ['constructor', 'x'], ['__proto__', 'y']])).toEqual({
      gclid: 'a', fbp: 'fb.1.2.3', msclkid: 'ms', ScCid: 'snap',
    })
  })

  it("reads the Google tag's _ga cookie as GA4's client id, and the Snap Pixel's _scid as scid", () => {
    expect(clickIdsFrom([['_ga', 'GA1.1.1197596843.1732780000'], ['_scid', '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13']])).toEqual({ ga: '1197596843.1732780000', scid: '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13' })
    expect(clickIdsFrom([['ga', '1197596843.1732780000']])).toEqual({ ga: '1197596843.1732780000' })
    expect(clickIdsFrom([['_ga', 'not-a-client-id']])).toEqual({})
  })

  it("reads the Microsoft UET tag's _uetvid cookie a storefront saved with the order as uetvid", () => {
    expect(clickIdsFrom([['_uetvid', '839d8b10dcb111ee9d98ad5bcaa80a53'], ['_uetsid', 'session']])).toEqual({ uetvid: '839d8b10dcb111ee9d98ad5bcaa80a53' })
  })

  it('keeps the first usable value and skips empty, non-text and over-long ones', () => {
    expect(clickIdsFrom([['gclid', '  '], ['gclid', 7], ['gclid', 'x'.repeat(2049)], ['gclid', 'first'], ['gclid', 'second']])).toEqual({ gclid: 'first' })
  })
})

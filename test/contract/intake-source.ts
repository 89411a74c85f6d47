/**
 * The suite every intake source runs (CONVENTIONS.md rule 3). It checks what must hold for any webhook format:
 * signatures are verified over the raw bytes and fail closed, each delivery becomes conversions whose messageIds
 * are stable (a retry or a second event about the same order dedupes), and no body, however broken, makes parse
 * throw anything but a SourceInputError (the route's 422). A source's own checks go in `additionalTests`.
 *
 *   testIntakeSource({ source, folder: 'shopify', options, otherOptions, invalidOptions, sign, signatureHeader, fixtures })
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as v from 'valibot'
import { SourceInputError, type IntakeSourceDefinition, type SourceConversion, type SourceParseResult } from '../../core/registry.ts'
import type { Confirmation } from '../../core/delivery/types.ts'

const CONFIRMATIONS: readonly Confirmation[] = ['payment_confirmed', 'crm_qualified', 'tracked']

/** What one conversion of a fixture must carry: the values that must survive the mapping. */
export interface ExpectedConversion {
  messageId: string
  event: string
  value?: number
  currency?: string
  orderId?: string
  /** The conversion's own claim; undefined means the source's `confirmation` applies. */
  confirmation?: Confirmation
}

/** A real delivery, as the vendor sends it. */
export interface SourceFixture {
  name: string
  /** The raw body, byte for byte. */
  body: string
  /** The headers besides the signature (topic, delivery id…). */
  headers?: Record<string, string>
  expected: ExpectedConversion[]
  /** The same sale delivered again another way (a retry with a new delivery id, another event for the same payment). */
  redelivery?: { body?: string, headers?: Record<string, string> }
}

/** A genuine delivery that carries no conversion (another topic, an unpaid order, a ping). */
export interface IgnoredFixture {
  name: string
  body: string
  headers?: Record<string, string>
  /** Sent without a signature by the vendor (WooCommerce's ping). */
  unsigned?: boolean
  reason: RegExp
}

export interface IntakeSourceContract<O> {
  source: IntakeSourceDefinition<O>
  /** The folder under adapters/sources whose index.ts exports the definition. */
  folder: string
  /** Valid options (as written in the config) whose secret `sign` uses. */
  options: unknown
  /** Valid options with a different secret: a signature made with `options` must not verify under them. */
  otherOptions: unknown
  /** Options the schema must refuse (besides `{}` for a source whose signature is required). */
  invalidOptions: unknown[]
  /** The signature headers the vendor would send for these bytes at `now`, computed independently of the source. */
  sign: (raw: Uint8Array, options: O, now: Date) => Headers
  /** The header that carries the signature. */
  signatureHeader: string
  fixtures: SourceFixture[]
  ignored?: IgnoredFixture[]
  /** The clock for signing and verifying. Default: now. */
  now?: Date
  additionalTests?: () => void
}

const bytes = (text: string) => new TextEncoder().encode(text)

/** The sources this suite ran for in this test file: test/sources/intake-sources.test.ts checks every registered one did. */
export const contractsRun = new Set<IntakeSourceDefinition<any>>()

export function testIntakeSource<O>(contract: IntakeSourceContract<O>): void {
  contractsRun.add(contract.source as IntakeSourceDefinition<any>)
  const { source, fixtures } = contract
  const now = contract.now ?? new Date()
  const options = v.parse(source.options, contract.options)
  const otherOptions = v.parse(source.options, contract.otherOptions)
  const headersOf = (fixture: { headers?: Record<string, string> }, signature?: Headers) => {
    const headers = new Headers(fixture.headers)
    signature?.forEach((value, name) => headers.set(name, value))
    return headers
  }
  const signed = (fixture: SourceFixture, body = fixture.body) => headersOf(fixture, contract.sign(bytes(body), options, now))
  const parse = (body: string | Uint8Array, headers: Headers) => source.parse(typeof body === 'string' ? bytes(body) : body, headers, options)

  describe(`intake source contract: ${source.name}`, () => {
    it('has at least one real fixture', () => {
      expect(fixtures.length).toBeGreaterThan(0)
    })

    describe('definition', () => {
      it('is an intake-source with a stable name, a signature policy and what a verified body proves', () => {
        expect(source.kind).toBe('intake-source')
        expect(source.name).toMatch(/^[a-z][a-z0-9_]*$/)
        expect(['required', 'optional']).toContain(source.signature)
        expect(CONFIRMATIONS).toContain(source.confirmation)
      })

      it('lives in its folder with a README giving the webhook URL, and index.ts exports it', async () => {
        const dir = new URL(`../../adapters/sources/${contract.folder}/`, import.meta.url)
        expect(existsSync(new URL('index.ts', dir)), `adapters/sources/${contract.folder}/index.ts`).toBe(true)
        expect(readFileSync(new URL('README.md', dir), 'utf8')).toContain(`/api/v1/conversions/${source.name}/`)
        const index = await import(new URL('index.ts', dir).href) as Record<string, unknown>
        expect(Object.values(index).flat()).toContain(source)
      })

      it('compares signatures with timingSafeEqual, in its folder or a helper it imports', () => {
        expect(codeOf(contract.folder)).toContain('timingSafeEqual(')
      })
    })

    describe('options', () => {
      it('accepts the valid options and refuses each invalid one', () => {
        expect(v.safeParse(source.options, contract.options).issues).toBeUndefined()
        expect(v.safeParse(source.options, contract.otherOptions).issues).toBeUndefined()
        if (source.signature === 'required') expect(v.safeParse(source.options, {}).success, '{} without a secret').toBe(false)
        contract.invalidOptions.forEach((invalid, index) => {
          expect(v.safeParse(source.options, invalid).success, `invalidOptions[${index}] was accepted`).toBe(false)
        })
      })
    })

    describe('signature', () => {
      const verify = (body: string | Uint8Array, headers: Headers, using = options) => source.verify(typeof body === 'string' ? bytes(body) : body, headers, using, now)
      const withSignature = (fixture: SourceFixture, value: string | undefined) => {
        const headers = signed(fixture)
        if (value === undefined) headers.delete(contract.signatureHeader)
        else headers.set(contract.signatureHeader, value)
        return headers
      }
      const signatureOf = (fixture: SourceFixture) => signed(fixture).get(contract.signatureHeader)!

      it.each(fixtures.map((f) => [f.name, f] as const))('the vendor\'s signature verifies and is seen: %s', (_name, fixture) => {
        expect(verify(fixture.body, signed(fixture))).toBe(true)
        expect(source.isSigned(signed(fixture))).toBe(true)
      })

      it.each(fixtures.map((f) => [f.name, f] as const))('missing, empty, wrong, truncated, padded or other-secret signatures fail: %s', (_name, fixture) => {
        const good = signatureOf(fixture)
        expect(verify(fixture.body, withSignature(fixture, undefined)), 'missing').toBe(false)
        expect(source.isSigned(withSignature(fixture, undefined)), 'missing is unsigned').toBe(false)
        expect(verify(fixture.body, withSignature(fixture, '')), 'empty').toBe(false)
        expect(verify(fixture.body, headersOf(fixture, contract.sign(bytes(`${fixture.body} `), options, now))), 'signature of other bytes').toBe(false)
        expect(verify(fixture.body, signed(fixture), otherOptions), 'other secret').toBe(false)
        // Length mismatches must answer false, not throw (timingSafeEqual throws on unequal lengths).
        for (const cut of [1, 8, good.length - 1]) expect(verify(fixture.body, withSignature(fixture, good.slice(0, cut))), `truncated to ${cut}`).toBe(false)
        expect(verify(fixture.body, withSignature(fixture, `${good}A`)), 'one character longer').toBe(false)
        expect(verify(fixture.body, withSignature(fixture, `${good}${good.slice(-4)}`)), 'four characters longer').toBe(false)
        expect(verify(fixture.body, withSignature(fixture, 'x'.repeat(8192))), 'huge').toBe(false)
      })

      it.each(fixtures.map((f) => [f.name, f] as const))('a tampered body fails: %s', (_name, fixture) => {
        const headers = signed(fixture)
        const body = bytes(fixture.body)
        for (const index of [0, Math.floor(body.length / 2), body.length - 1]) {
          const tampered = body.slice()
          tampered[index] = tampered[index]! ^ 0x01
          expect(verify(tampered, headers), `byte ${index} flipped`).toBe(false)
        }
        expect(verify(`${fixture.body}\n`, headers), 'newline appended').toBe(false)
        expect(verify(fixture.body.slice(0, -1), headers), 'last byte cut').toBe(false)
        const reserialised = JSON.stringify(JSON.parse(fixture.body))
        if (reserialised !== fixture.body) expect(verify(reserialised, headers), 're-serialised').toBe(false)
      })

      it('never throws on an arbitrary signature header; it only answers whether it matches', () => {
        const fixture = fixtures[0]!
        fc.assert(fc.property(fc.string({ maxLength: 300 }), (value) => {
          expect(verify(fixture.body, withSignature(fixture, value))).toBe(false)
        }), { numRuns: 300 })
      })
    })

    describe('parsing', () => {
      it.each(fixtures.map((f) => [f.name, f] as const))('carries every conversion with its value, currency, order id and event: %s', (_name, fixture) => {
        const result = parse(fixture.body, signed(fixture))
        expect(result.kind).toBe('conversions')
        const conversions = conversionsOf(result)
        expect(conversions.map(pickExpected)).toEqual(fixture.expected)
        for (const conversion of conversions) expectWellFormed(conversion)
        expect(result.kind === 'conversions' && result.sourceEventType.length > 0).toBe(true)
      })

      it.each(fixtures.map((f) => [f.name, f] as const))('is idempotent: the same delivery, parsed again or unsigned, gives the same conversions: %s', (_name, fixture) => {
        const first = parse(fixture.body, signed(fixture))
        expect(parse(fixture.body, signed(fixture))).toEqual(first)
        expect(parse(fixture.body, headersOf(fixture))).toEqual(first)
      })

      it.each(fixtures.filter((f) => f.redelivery).map((f) => [f.name, f] as const))('a replayed delivery dedupes on the same messageIds: %s', (_name, fixture) => {
        const again = { ...fixture, body: fixture.redelivery!.body ?? fixture.body, headers: { ...fixture.headers, ...fixture.redelivery!.headers } }
        const ids = (f: SourceFixture) => conversionsOf(parse(f.body, signed(f))).map((c) => c.messageId)
        expect(ids(again)).toEqual(ids(fixture))
      })

      it('does not change the bytes it is given', () => {
        const fixture = fixtures[0]!
        const raw = bytes(fixture.body)
        const copy = raw.slice()
        source.parse(raw, signed(fixture), options)
        expect(raw).toEqual(copy)
      })

      it.each((contract.ignored ?? []).map((f) => [f.name, f] as const))('a delivery without a conversion is ignored with its reason: %s', (_name, fixture) => {
        const signature = fixture.unsigned ? undefined : contract.sign(bytes(fixture.body), options, now)
        const result = source.parse(bytes(fixture.body), headersOf(fixture, signature), options)
        expect(result).toEqual({ kind: 'ignored', reason: expect.stringMatching(fixture.reason) })
      })
    })

    describe('bodies it cannot read', () => {
      const fixture = fixtures[0]!
      const headers = signed(fixture)

      it.each([
        ['empty', ''], ['whitespace', ' \n\t '], ['not JSON', 'this is not json'], ['truncated JSON', fixture.body.slice(0, Math.floor(fixture.body.length / 2))],
        ['a JSON array', '[]'], ['an array of the fixture', `[${fixture.body}]`], ['null', 'null'], ['a number', '42'], ['a string', '"order"'],
        ['an empty object', '{}'], ['ids set to null', '{"id":null,"type":null,"event":null,"data":null}'], ['invalid UTF-8', new Uint8Array([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D])],
      ] as const)('%s → SourceInputError naming the problem', (_name, body) => {
        const error = thrownBy(() => parse(body, headers))
        expect(error).toBeInstanceOf(SourceInputError)
        expect((error as SourceInputError).message.length).toBeGreaterThan(0)
        expect((error as SourceInputError).problems.length).toBeGreaterThan(0)
      })

      it('numbers too large for a double never become Infinity: they are refused or kept finite', () => {
        for (const f of fixtures) {
          const huge = f.body.replace(/(?<=[:[,]\s*)-?\d+(\.\d+)?(?=\s*[,}\]])/g, '1e400')
          onlyInputErrors(() => parse(huge, signed(f, huge)))
        }
      })

      it('without any one top-level field, the fixtures still parse or are refused with a SourceInputError', () => {
        for (const f of fixtures) {
          for (const key of Object.keys(JSON.parse(f.body) as object)) {
            const body = JSON.stringify({ ...JSON.parse(f.body) as object, [key]: undefined })
            onlyInputErrors(() => parse(body, signed(f, body)))
          }
        }
      })

      it('property: arbitrary bytes never make parse throw anything but SourceInputError', () => {
        fc.assert(fc.property(fc.uint8Array({ maxLength: 512 }), (raw) => onlyInputErrors(() => parse(raw, headers))), { numRuns: 500 })
      })

      it('property: arbitrary JSON never makes parse throw anything but SourceInputError', () => {
        fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => onlyInputErrors(() => parse(JSON.stringify(value), headers))), { numRuns: 500 })
      })

      it('property: a fixture with any one field replaced by arbitrary JSON parses well-formed or is refused', () => {
        for (const f of fixtures) {
          const original = JSON.parse(f.body) as unknown
          const paths = pathsOf(original)
          fc.assert(fc.property(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 3 }), (path, value) => {
            const body = JSON.stringify(replaceAt(structuredClone(original), path, value))
            onlyInputErrors(() => parse(body, signed(f, body)))
          }), { numRuns: 300 })
        }
      })
    })

    contract.additionalTests?.()
  })
}

/** The conversions of a parse result (an ignored delivery has none). */
export function conversionsOf(result: SourceParseResult): SourceConversion[] {
  return result.kind === 'conversions' ? result.conversions : []
}

/** Runs parse: a result must be well-formed; a throw must be a SourceInputError with its problems listed. */
function onlyInputErrors(run: () => SourceParseResult): void {
  let result: SourceParseResult
  try {
    result = run()
  }
  catch (error) {
    if (!(error instanceof SourceInputError)) throw error
    expect(error.problems.length).toBeGreaterThan(0)
    return
  }
  if (result.kind === 'ignored') expect(result.reason.length).toBeGreaterThan(0)
  for (const conversion of conversionsOf(result)) expectWellFormed(conversion)
}

const TRAITS = ['email', 'phone', 'first_name', 'last_name', 'street', 'postal_code', 'city', 'state', 'country', 'external_id'] as const

/** What the pipeline relies on: a usable messageId and event, finite amounts, a real date, text-only personal data. */
function expectWellFormed(conversion: SourceConversion): void {
  expect(conversion.messageId).toMatch(/^\S(.{0,253}\S)?$/)
  expect(typeof conversion.event === 'string' && conversion.event.length > 0).toBe(true)
  if (conversion.value !== undefined) expect(Number.isFinite(conversion.value)).toBe(true)
  if (conversion.currency !== undefined) expect(conversion.currency).toMatch(/^[A-Z]{3}$/)
  if (conversion.occurredAt !== undefined) expect(Number.isNaN(conversion.occurredAt.getTime())).toBe(false)
  if (conversion.confirmation !== undefined) expect(CONFIRMATIONS).toContain(conversion.confirmation)
  for (const item of conversion.items ?? []) {
    for (const field of ['price', 'quantity'] as const) if (item[field] !== undefined) expect(Number.isFinite(item[field])).toBe(true)
  }
  for (const trait of TRAITS) if (conversion.traits?.[trait] !== undefined) expect(typeof conversion.traits[trait]).toBe('string')
  for (const value of Object.values(conversion.identifiers ?? {})) if (value !== undefined) expect(typeof value).toBe('string')
}

/** The fields a fixture states (toEqual treats an undefined field as absent). */
function pickExpected({ messageId, event, value, currency, orderId, confirmation }: SourceConversion): ExpectedConversion {
  return { messageId, event, value, currency, orderId, confirmation }
}

function thrownBy(run: () => unknown): unknown {
  try {
    run()
  }
  catch (error) {
    return error
  }
  return undefined
}

type Path = (string | number)[]

/** Every path into a JSON value, objects and arrays included. */
function pathsOf(value: unknown, prefix: Path = []): Path[] {
  if (typeof value !== 'object' || value === null) return [prefix]
  const children = Object.entries(value).flatMap(([key, child]) => pathsOf(child, [...prefix, Array.isArray(value) ? Number(key) : key]))
  return [prefix, ...children]
}

function replaceAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value
  let parent = root as Record<string | number, unknown>
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
  parent[path.at(-1)!] = value
  return root
}

/** The source's own files and the shared helpers they import (one level), as text. */
function codeOf(folder: string): string {
  const dir = new URL(`../../adapters/sources/${folder}/`, import.meta.url)
  const files = readdirSync(dir).filter((name) => name.endsWith('.ts')).map((name) => readFileSync(new URL(name, dir), 'utf8'))
  const imported = files.flatMap((text) => [...text.matchAll(/from '(\.\.?\/[^']+\.ts)'/g)].map((match) => new URL(match[1]!, dir)))
  return [...files, ...imported.filter((url) => existsSync(url)).map((url) => readFileSync(url, 'utf8'))].join('\n')
}

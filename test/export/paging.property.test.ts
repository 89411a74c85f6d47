import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import { MAX_TIE } from '../../plugins/export/paging/instant.ts'
import { compareKeys, insertConversions, insertIdentifiedUsers, insertVisits, pageAll, sqlOf, uuidOf, type ConversionSeed, type Sql } from './support.ts'

// Property: for random records (many sharing one timestamp, ids anywhere in the UUID range, another site's records
// interleaved), a random limit and a random since/until (dates, offsets, fewer or more fraction digits, positions
// between two records of one time), following next_since returns exactly the records in [since, until), in order,
// each once. Runs on PGlite by default and on PostgreSQL when DATABASE_URL is set.
let app: TestApp
let sql: Sql
let key: string

beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export'], sites: [{ id: 'demo', name: 'Demo' }, { id: 'other', name: 'Other' }] }, { builtInPlugins })
  sql = sqlOf(app)
  key = await app.createKey('demo')
})
afterAll(async () => {
  await app?.close()
})

const BASE = BigInt(Date.parse('2026-03-01T00:00:00Z')) * 1000n
/** µs after BASE: the same microsecond, its neighbours, millisecond and second boundaries, an hour later. */
const OFFSETS = [0n, 1n, 2n, 999n, 1000n, 1001n, 123_456n, 500_000n, 1_000_000n, 3_600_000_000n] as const

const iso = (micros: bigint) => `${new Date(Number(micros / 1000n)).toISOString().slice(0, 19)}.${String(micros % 1_000_000n).padStart(6, '0')}Z`

const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.bigInt({ min: 0n, max: MAX_TIE }) },
  { weight: 1, arbitrary: fc.constantFrom(0n, 1n, MAX_TIE - 1n, MAX_TIE, 1n << 127n) },
)
/** Half of the records at one instant, so that pages often start and end inside a run of equal times. */
const atArb = fc.oneof({ weight: 1, arbitrary: fc.constant(0n) }, { weight: 1, arbitrary: fc.constantFrom(...OFFSETS) })
const recordArb = fc.record({ at: atArb, id: idArb, other: fc.boolean(), flag: fc.boolean() })
const recordsArb = fc.uniqueArray(recordArb, { maxLength: 120, size: 'max', selector: (r) => r.id })

interface Bound { text: string, micros: bigint, tie: bigint }

/** A bound the way clients write one: same instant, different spellings; or a position between records of one time. */
function boundArb(): fc.Arbitrary<Bound> {
  const atTime = fc.tuple(fc.constantFrom(...OFFSETS), fc.constantFrom(-1n, 0n, 0n, 1n), fc.constantFrom('micro', 'short', 'plus2', 'minus0530', 'local', 'date'))
    .map(([offset, delta, style]) => {
      const micros = style === 'date' ? BASE + (offset >= 3_600_000_000n ? 86_400_000_000n : 0n) : BASE + offset + delta
      return { text: spell(micros, style), micros, tie: 0n }
    })
  const between = fc.tuple(fc.constantFrom(...OFFSETS), idArb).map(([offset, tie]) => {
    const micros = BASE + offset
    const digits = String(tie).padStart(39, '0').replace(/0+$/, '')
    return { text: `${iso(micros).slice(0, -1)}${digits}Z`, micros, tie }
  })
  return fc.oneof(atTime, between)
}

function spell(micros: bigint, style: string): string {
  const full = iso(micros)
  const fraction = full.slice(20, 26)
  switch (style) {
    case 'date': return full.slice(0, 10)
    case 'short': return `${full.slice(0, 19)}${fraction.replace(/0+$/, '') ? `.${fraction.replace(/0+$/, '')}` : ''}Z`
    case 'local': return full.slice(0, -1)
    case 'plus2': return `${shifted(micros, 120)}.${fraction}+02:00`
    case 'minus0530': return `${shifted(micros, -330)}.${fraction}-0530`
    default: return full
  }
}

const shifted = (micros: bigint, minutes: number) => new Date(Number(micros / 1000n) + minutes * 60_000).toISOString().slice(0, 19)

const windowArb = fc.record({
  since: fc.option(boundArb(), { nil: undefined }),
  until: fc.option(boundArb(), { nil: undefined }),
  limit: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(100, 500, 1000) }),
})

type Key = [bigint, bigint]
type Rec = { at: bigint, id: bigint, other: boolean, flag: boolean }
const inWindow = (k: Key, w: { since?: Bound, until?: Bound }) =>
  (!w.since || compareKeys(k, [w.since.micros, w.since.tie]) >= 0) && (!w.until || compareKeys(k, [w.until.micros, w.until.tie]) < 0)

interface Case {
  path: string
  /** Writes the generated records; returns every record the list should show (this site's, in any order) with its key. */
  seed: (records: Rec[]) => Promise<{ key: Key, id: string }[]>
  idOf: (record: Record<string, unknown>) => string
}

const visits = (filter: (r: Rec) => boolean) => async (records: Rec[]) => {
  await insertVisits(sql, records.map((r) => ({ id: uuidOf(r.id), siteId: r.other ? 'other' : 'demo', startedAt: iso(BASE + r.at), isBot: r.flag, isVpn: !r.flag })))
  return records.filter((r) => !r.other && filter(r)).map((r) => ({ key: [BASE + r.at, r.id] as Key, id: `sess-${uuidOf(r.id)}` }))
}

const CASES: Case[] = [
  { path: 'sessions', seed: visits(() => true), idOf: (r) => r.session_id as string },
  { path: 'bot-detections', seed: visits((r) => r.flag), idOf: (r) => r.session_id as string },
  { path: 'vpn-proxy-detections', seed: visits((r) => !r.flag), idOf: (r) => r.session_id as string },
  {
    path: 'identified-users',
    seed: async (records) => {
      await insertIdentifiedUsers(sql, records.map((r) => ({ id: uuidOf(r.id), siteId: r.other ? 'other' : 'demo', identifiedAt: iso(BASE + r.at) })))
      return records.filter((r) => !r.other).map((r) => ({ key: [BASE + r.at, r.id] as Key, id: uuidOf(r.id) }))
    },
    idOf: (r) => r.id as string,
  },
  {
    // `flag`: delivered (a sent delivery) or not; order ids from a small pool so that folding happens often.
    path: 'conversions',
    seed: async (records) => {
      const seeds: ConversionSeed[] = records.map((r) => ({
        id: uuidOf(r.id), siteId: r.other ? 'other' : 'demo', createdAt: iso(BASE + r.at), orderId: r.id % 5n === 0n ? null : `order-${r.id % 29n}`,
        deliveries: r.flag ? [['meta', 'sent'], ['google_ads', r.id % 2n ? 'sent' : 'failed']] : [['meta', 'failed']],
      }))
      await insertConversions(sql, seeds)
      const delivered = records.filter((r) => !r.other && r.flag).map((r) => ({ key: [BASE + r.at, r.id] as Key, id: uuidOf(r.id), order: seeds.find((s) => s.id === uuidOf(r.id))!.orderId }))
      // The fold: of the delivered conversions sharing an order id, only the one with the lowest key.
      return delivered.filter((c) => c.order === null || !delivered.some((o) => o.order === c.order && compareKeys(o.key, c.key) < 0))
    },
    idOf: (r) => r.id as string,
  },
]

async function clear(): Promise<void> {
  await sql('delete from deliveries')
  await sql('delete from conversions')
  await sql('delete from visits')
  await sql('delete from identified_users')
}

describe.each(CASES)('$path: the pages of any window hold exactly its records, each once', ({ path, seed, idOf }) => {
  it('for random records, limits and windows', { timeout: 240_000 }, async () => {
    await fc.assert(fc.asyncProperty(recordsArb, windowArb, async (records, window) => {
      await clear()
      const listed = await seed(records)
      const expected = listed.filter((r) => inWindow(r.key, window)).sort((a, b) => compareKeys(a.key, b.key)).map((r) => r.id)
      const { records: got } = await pageAll(app, key, `/api/v1/export/${path}`, { since: window.since?.text, until: window.until?.text, limit: window.limit, maxPages: 200 })
      expect(got.map(idOf)).toEqual(expected)
    }), { numRuns: Number(process.env.EXPORT_PROPERTY_RUNS ?? 60) })
  })
})

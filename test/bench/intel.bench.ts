/**
 * What plugins/capture/intel costs: boot time and memory of createVisitIntel, and classify() per call.
 *
 *   node test/bench/intel.bench.ts          # 100k calls per scenario
 *   BENCH_CALLS=1000000 node test/bench/intel.bench.ts
 *
 * Scenarios: a realistic mix (many addresses, some repeated as a visit's hits are, a few hundred user agents, so the
 * UA cache hits), every call from a new address (the address cache never hits), every call with a new user agent
 * (the UA cache never hits: what a bot rotating UAs costs), IPv6 only, and no address at all.
 * Prints figures; it is not a pass/fail test.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createVisitIntel } from '../../plugins/capture/intel/index.ts'
import type { ClassifyInput } from '../../plugins/capture/intel/types.ts'

const CALLS = Number(process.env.BENCH_CALLS ?? 100_000)
const dir = mkdtempSync(join(tmpdir(), 'dcgate-intel-bench-'))
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`

// A small deterministic generator, so runs are comparable.
let seed = 42
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!

const BASE_UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/VER.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.VER Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.VER Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/VER.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:VER.0) Gecko/20100101 Firefox/VER.0',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/VER.0.0.0 Safari/537.36',
]
const uas = Array.from({ length: 300 }, (_, i) => BASE_UAS[i % BASE_UAS.length]!.replaceAll('VER', String(100 + i)))
const publicV4 = () => `${1 + Math.floor(random() * 222)}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`
const v6 = () => `2a0${Math.floor(random() * 10)}:${Math.floor(random() * 65_535).toString(16)}:${Math.floor(random() * 65_535).toString(16)}::1`
const signals = { webdriver: false, interactions: 3, firstInteractionMs: 900, sinceLoadMs: 2_000 }

/** A distinct public IPv4 address per call number. */
const nthV4 = (i: number) => `${11 + (i >>> 16)}.${(i >>> 8) & 255}.${i & 255}.7`

/** The measured inputs, and a warm-up set made from other call numbers (so a cache warmed by it is no help). */
function inputs(make: (i: number) => ClassifyInput): { warmUp: ClassifyInput[], measured: ClassifyInput[] } {
  return { warmUp: Array.from({ length: 20_000 }, (_, i) => make(CALLS + i)), measured: Array.from({ length: CALLS }, (_, i) => make(i)) }
}

const scenarios: [string, ReturnType<typeof inputs>][] = [
  ['mix: random IPv4, 300 UAs, signals', inputs(() => ({ ip: publicV4(), userAgent: pick(uas), signals }))],
  ['every address new (address cache misses)', inputs((i) => ({ ip: nthV4(i), userAgent: pick(uas), signals }))],
  ['every UA new (UA cache misses)', inputs((i) => ({ ip: publicV4(), userAgent: `${pick(uas)} build/${i}`, signals }))],
  ['IPv6, 300 UAs', inputs(() => ({ ip: v6(), userAgent: pick(uas) }))],
  ['no IP, one UA (parsing floor)', inputs(() => ({ ip: undefined, userAgent: uas[0] }))],
]

globalThis.gc?.()
const before = process.memoryUsage()
let started = performance.now()
const intel = await createVisitIntel({ dataDir: dir, logger: console })
const bootMs = performance.now() - started
globalThis.gc?.()
const after = process.memoryUsage()
console.log(`createVisitIntel: ${bootMs.toFixed(0)} ms; retained heap ${mb(after.heapUsed - before.heapUsed)}, array buffers ${mb(after.arrayBuffers - before.arrayBuffers)}, rss ${mb(after.rss)}${globalThis.gc ? '' : ' (run with --expose-gc for exact figures)'}`)
for (const [name, info] of Object.entries(intel.dataInfo)) console.log(`  ${name.padEnd(8)} ${info.source} (${info.date ?? 'no date'}, ${info.entries ?? '-'} entries)`)

console.log(`\nclassify() × ${CALLS.toLocaleString('en')} per scenario (after a warm-up pass of 20,000 other inputs)`)
let sink = 0
for (const [name, { warmUp, measured }] of scenarios) {
  for (const input of warmUp) sink += intel.classify(input).botReasons.length
  started = performance.now()
  for (const input of measured) sink += intel.classify(input).botReasons.length
  const ms = performance.now() - started
  console.log(`  ${name.padEnd(42)} ${(ms * 1000 / CALLS).toFixed(2).padStart(6)} µs/call  ${(CALLS / ms * 1000).toFixed(0).padStart(8)} calls/s`)
}
console.log(`  (bot verdicts seen: ${sink})`)
rmSync(dir, { recursive: true, force: true })

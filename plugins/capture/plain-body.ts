/**
 * A hand-written check of the /collect body, for the hot path: it accepts only bodies the valibot schema
 * (`CollectBody` in protocol.ts) certainly accepts, and returns them as the schema would (the consent default
 * filled in). Anything else, including every invalid body, goes through the schema, which stays the one definition
 * of the protocol and writes the error messages. valibot copies every object it checks; for the script's small
 * bodies that was about 3 µs and a good part of the garbage of a request. `test/capture/plain-body.test.ts`
 * checks with generated bodies that this never accepts what the schema refuses, nor answers differently.
 */
import { CLICK_ID_KEYS, PROP_COLUMN_LENGTHS, type CollectBody } from './protocol.ts'

const ID = /^[A-Za-z0-9_-]{8,64}$/
const HEX64 = /^[0-9a-f]{64}$/
const HEX12 = /^[0-9a-f]{12}$/
const CLICK_IDS: ReadonlySet<string> = new Set(CLICK_ID_KEYS)
const CONSENTS: ReadonlySet<unknown> = new Set(['granted', 'denied', 'unknown'])
const BODY_KEYS: ReadonlySet<string> = new Set(['v', 'sid', 'vid', 'hits', 'clickIds', 'consent', 'signals', 'device', 'screen', 'lang', 'tz', 'gpc'])

type Obj = Record<string, unknown>

const isObject = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x)
const isText = (x: unknown, max: number): boolean => typeof x === 'string' && x.length <= max
const optText = (x: unknown, max: number): boolean => x === undefined || isText(x, max)
const optId = (x: unknown): boolean => x === undefined || (typeof x === 'string' && ID.test(x))
const isCount = (x: unknown): boolean => typeof x === 'number' && Number.isInteger(x) && x >= 0
const optCount = (x: unknown): boolean => x === undefined || isCount(x)

/** Only the keys a schema names: an unknown key means the schema decides (it drops them; we would not). */
function onlyKeys(o: Obj, keys: ReadonlySet<string>): boolean {
  for (const key in o) if (!keys.has(key)) return false
  return true
}

const PAGEVIEW_KEYS: ReadonlySet<string> = new Set(['t', 'hid', 'ts', 'url', 'ref', 'title'])
const EVENT_KEYS: ReadonlySet<string> = new Set(['t', 'hid', 'ts', 'url', 'name', 'props', 'id'])

function hitOk(h: unknown): boolean {
  if (!isObject(h) || !optId(h.hid) || !isCount(h.ts) || !isText(h.url, 4096)) return false
  if (h.t === 'pageview') return onlyKeys(h, PAGEVIEW_KEYS) && optText(h.ref, 4096) && optText(h.title, 500)
  if (h.t !== 'event' || !onlyKeys(h, EVENT_KEYS)) return false
  if (typeof h.name !== 'string' || h.name.length < 1 || h.name.length > 255) return false
  if (h.id !== undefined && (typeof h.id !== 'string' || h.id.length < 1 || h.id.length > 255)) return false
  return h.props === undefined || propsOk(h.props)
}

/** Keys valibot's record leaves out of its output; with one of them, the schema decides. */
const GUARDED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor'])
/** Properties that go into a column are shorter. */
const PROP_MAX: ReadonlyMap<string, number> = new Map(Object.entries(PROP_COLUMN_LENGTHS))

function propsOk(props: unknown): boolean {
  if (!isObject(props)) return false
  let n = 0
  for (const key in props) {
    if (++n > 50 || key.length > 100 || GUARDED_KEYS.has(key)) return false
    const value = props[key]
    if (!(value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)) || isText(value, PROP_MAX.get(key) ?? 1000))) return false
  }
  return true
}

const SIGNAL_KEYS: ReadonlySet<string> = new Set(['webdriver', 'headless', 'interactions', 'firstInteractionMs', 'sinceLoadMs'])

function signalsOk(s: unknown): boolean {
  if (!isObject(s) || !onlyKeys(s, SIGNAL_KEYS)) return false
  if (s.webdriver !== undefined && typeof s.webdriver !== 'boolean') return false
  if (s.headless !== undefined && !(Array.isArray(s.headless) && s.headless.length <= 20 && s.headless.every((x) => isText(x, 64)))) return false
  return optCount(s.interactions) && optCount(s.firstInteractionMs) && optCount(s.sinceLoadMs)
}

const DEVICE_KEYS: ReadonlySet<string> = new Set(['hash', 'short', 'confidence', 'version'])
const SCREEN_KEYS: ReadonlySet<string> = new Set(['w', 'h'])

function deviceOk(d: unknown): boolean {
  return isObject(d) && onlyKeys(d, DEVICE_KEYS) && typeof d.hash === 'string' && HEX64.test(d.hash) && typeof d.short === 'string' && HEX12.test(d.short)
    && typeof d.confidence === 'number' && d.confidence >= 0 && d.confidence <= 1 && typeof d.version === 'number' && Number.isInteger(d.version) && d.version >= 1
}

function clickIdsOk(ids: unknown): boolean {
  if (!isObject(ids)) return false
  for (const key in ids) if (!CLICK_IDS.has(key) || !isText(ids[key], 500)) return false
  return true
}

/** The body, typed, when it certainly matches CollectBody; undefined when the schema has to decide. */
export function plainCollectBody(input: unknown): CollectBody | undefined {
  if (!isObject(input) || input.v !== 1 || !onlyKeys(input, BODY_KEYS) || !optId(input.sid) || !optId(input.vid)) return undefined
  const hits = input.hits
  if (!Array.isArray(hits) || hits.length < 1 || hits.length > 50 || !hits.every(hitOk)) return undefined
  if (input.consent !== undefined && !CONSENTS.has(input.consent)) return undefined
  if (input.clickIds !== undefined && !clickIdsOk(input.clickIds)) return undefined
  if (input.signals !== undefined && !signalsOk(input.signals)) return undefined
  if (input.device !== undefined && !deviceOk(input.device)) return undefined
  if (input.screen !== undefined && !(isObject(input.screen) && onlyKeys(input.screen, SCREEN_KEYS) && isCount(input.screen.w) && isCount(input.screen.h))) return undefined
  if (!optText(input.lang, 35) || !optText(input.tz, 64)) return undefined
  if (input.gpc !== undefined && typeof input.gpc !== 'boolean') return undefined
  input.consent ??= 'unknown'
  return input as unknown as CollectBody
}

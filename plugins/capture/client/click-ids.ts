/** Click ids from the landing URL, and the Meta pixel's and Microsoft UET tag's cookies. Pure: no DOM, so it is tested in node. */
import type { ClickIdKey } from './constants.ts'
import { readCookie } from './cookie.ts'

export type ClickIds = Partial<Record<ClickIdKey, string>>

/** URL parameters the script keeps; fbclid becomes fbc. Matched case-insensitively (ScCid, sccid). */
const URL_KEYS = ['gclid', 'gbraid', 'wbraid', 'fbclid', 'ttclid', 'li_fat_id', 'msclkid', 'rdt_cid', 'epik', 'twclid', 'ScCid'] as const

/** The protocol caps a click id at 500 characters; a cut id is useless, so longer ones are dropped. */
const MAX = 480

/** Meta's click id cookie format: `fb.1.<ms the click was first seen>.<fbclid>`. */
export function toFbc(fbclid: string, ms: number): string {
  return `fb.1.${ms}.${fbclid}`
}

/** A browser id in the form the Meta pixel writes to `_fbp`: `fb.1.<ms>.<10 random digits>`. */
export function newFbp(ms: number, random: number = crypto.getRandomValues(new Uint32Array(1))[0]! / 2 ** 32): string {
  return `fb.1.${ms}.${1e9 + Math.floor(random * 9e9)}`
}

/** The ms part of a `fb.1.<ms>.<value>` id, or -1. */
function fbTime(id: string | undefined): number {
  const match = /^fb\.\d\.(\d+)\./.exec(id || '')
  return match ? +match[1]! : -1
}

/** The click ids of a URL's query string merged over the kept ones (latest wins per key). */
export function extractClickIds(search: string, now: number, kept: ClickIds = {}): ClickIds {
  const ids: ClickIds = { ...kept }
  new URLSearchParams(search).forEach((raw, name) => {
    const value = raw.trim()
    const key = URL_KEYS.find((k) => k.toLowerCase() === name.toLowerCase())
    if (!key || !value || value.length > MAX) return
    if (key !== 'fbclid') ids[key] = value
    // The same fbclid seen again (a reload, a shared link) keeps the time it was first seen, and a fifth segment the
    // pixel's cookie may carry after it (fb.1.<ms>.<fbclid>.<appendix>).
    else if (ids.fbc?.split('.')[3] !== value) ids.fbc = toFbc(value, now)
  })
  return ids
}

/**
 * Merges the Meta pixel's `_fbp` and `_fbc` cookies: the pixel's `_fbp` wins (it is the id Meta knows); of two fbc
 * the later click wins. Without any fbp, one is created when `create` (consent allows storing one).
 */
export function withMetaCookies(ids: ClickIds, cookies: string, now: number, create: boolean): ClickIds {
  const out = { ...ids }
  const fbp = readCookie(cookies, '_fbp')
  const fbc = readCookie(cookies, '_fbc')
  if (fbp && fbp.length <= MAX) out.fbp = fbp
  else if (!out.fbp && create) out.fbp = newFbp(now)
  if (fbc && fbc.length <= MAX && fbTime(fbc) > fbTime(out.fbc)) out.fbc = fbc
  return out
}

/**
 * Ids the site's own tags keep in cookies, where the site runs them; without a cookie the kept id stays, and none is
 * ever made up (only the tag's own id matches the platform's):
 * - `_uetvid`, the Microsoft UET tag's visitor id, which Microsoft's Conversions API wants with every event (`anonymousId`);
 * - `_scid`, the Snap Pixel's browser id (Snap's `sc_cookie1`);
 * - `_ga`, the Google tag's client id (`GA1.1.<a>.<b>` → `<a>.<b>`), GA4's `client_id`;
 * - the first `_ga_<container>` (`GS1.1.<session>.…` or `GS2.1.s<session>$…`), kept as `<container>.<session>`.
 */
export function withTagCookies(ids: ClickIds, cookies: string): ClickIds {
  const out = { ...ids }
  const keep = (key: ClickIdKey, pattern: RegExp) => {
    const match = pattern.exec(cookies)
    if (match) out[key] = match.slice(1).join('.')
  }
  keep('uetvid', /(?:^|; *)_uetvid=([^;\s]{1,480})(?:;|$)/)
  keep('scid', /(?:^|; *)_scid=([^;\s]{1,480})(?:;|$)/)
  keep('ga', /(?:^|; *)_ga=GA\d\.\d+\.(\d+\.\d+)(?:;|$)/)
  keep('ga_session', /(?:^|; *)_ga_(\w{4,20})=GS\d\.\d+\.s?(\d+)/)
  return out
}

/** Ids that name the browser, not a click: they are not dropped after 90 days. */
const BROWSER_IDS: ReadonlySet<ClickIdKey> = new Set(['fbp', 'uetvid', 'ga', 'ga_session', 'scid'])

/**
 * A click id is kept 90 days from when it was first seen: the longest click-through window the platforms accept
 * (Google Ads, Microsoft Ads), so an older one would be refused or left unattributed. Browser ids (`fbp`, `uetvid`,
 * `ga`, `ga_session`, `scid`) stay.
 */
export const CLICK_ID_MAX_AGE_MS = 90 * 86_400_000

/** The kept ids, and when each was first seen (ms); stored together, the times under `_t`. */
export interface KeptClickIds { ids: ClickIds, seen: Partial<Record<ClickIdKey, number>> }

/**
 * Reads kept click ids from storage, dropping anything that is not a known key with a string value, and ids seen
 * more than 90 days ago. Ids stored before their times were (no `_t`) count from now.
 */
export function parseClickIds(stored: string | undefined, keys: readonly ClickIdKey[], now: number): KeptClickIds {
  const kept: KeptClickIds = { ids: {}, seen: {} }
  try {
    const parsed = JSON.parse(stored || '{}') as Record<string, unknown>
    const times = (parsed._t || {}) as Record<string, unknown>
    for (const key of keys) {
      const value = parsed[key]
      const at = typeof times[key] == 'number' ? times[key] : now
      if (typeof value == 'string' && value.length <= MAX && (BROWSER_IDS.has(key) || now - at <= CLICK_ID_MAX_AGE_MS)) {
        kept.ids[key] = value
        kept.seen[key] = at
      }
    }
  } catch {}
  return kept
}

/** The ids now, each with the time it was first seen: a new or changed id is seen `now`. */
export function stampClickIds(before: KeptClickIds, ids: ClickIds, now: number): KeptClickIds {
  const seen: KeptClickIds['seen'] = {}
  for (const key in ids) {
    const k = key as ClickIdKey
    seen[k] = before.ids[k] === ids[k] ? before.seen[k] ?? now : now
  }
  return { ids, seen }
}

export function formatClickIds(kept: KeptClickIds): string {
  return JSON.stringify({ ...kept.ids, _t: kept.seen })
}

/** Click ids from the landing URL and Meta's cookies. Pure: no DOM, so it is tested in node. */
import type { ClickIdKey } from './constants.ts'

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
    // The same fbclid seen again (a reload, a shared link) keeps the time it was first seen.
    else if (!ids.fbc || !ids.fbc.endsWith(`.${value}`)) ids.fbc = toFbc(value, now)
  })
  return ids
}

/** One cookie's value from a `document.cookie` string. */
export function readCookie(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(';')) {
    const at = part.indexOf('=')
    if (part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim())
      } catch {
        return undefined
      }
    }
  }
  return undefined
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

/** Reads kept click ids from storage, dropping anything that is not a known key with a string value. */
export function parseClickIds(stored: string | undefined, keys: readonly string[]): ClickIds {
  const ids: Record<string, string> = {}
  try {
    const parsed: unknown = JSON.parse(stored || '{}')
    for (const key of keys) {
      const value = (parsed as Record<string, unknown>)[key]
      if (typeof value === 'string' && value.length <= MAX) ids[key] = value
    }
  } catch {}
  return ids
}

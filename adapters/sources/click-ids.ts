/**
 * Click and browser ids found in a webhook: in a landing-page URL's query string, or in name/value pairs a
 * storefront script saved with the order (Shopify note_attributes, WooCommerce meta_data, Stripe metadata).
 * Names match case-insensitively and with or without leading underscores, so cookie names (`_fbc`, `_fbp`)
 * work as well as query parameters (`gclid`).
 */
import { gaClientId } from '../shared/helpers.ts'

const NAMES = ['gclid', 'gbraid', 'wbraid', 'fbclid', 'fbc', 'fbp', 'ttclid', 'li_fat_id', 'msclkid', 'uetvid', 'ga', 'ga_session', 'rdt_cid', 'epik', 'twclid', 'ScCid', 'scid', 'dc_session_id'] as const
const BY_KEY = new Map<string, string>(NAMES.map((name) => [name.toLowerCase(), name]))

/**
 * Cookies whose name or form is not the id's: Microsoft UET keeps msclkid in `_uetmsclkid`, Google in `_gcl_aw` as
 * GCL.<time>.<gclid>, and the Google tag its client id in `_ga` as GA1.1.<a>.<b> (GA4's client_id is `<a>.<b>`).
 */
const COOKIES = new Map<string, { name: string, read: (value: string) => string | undefined }>([
  ['uetmsclkid', { name: 'msclkid', read: (value) => value }],
  ['gcl_aw', { name: 'gclid', read: (value) => value.split('.').slice(2).join('.') || undefined }],
  ['ga', { name: 'ga', read: gaClientId }],
])


export type ClickIdRecord = Record<string, string>

/** A visit id longer than the column (conversions.session_id) cannot be one of ours; it is dropped like a broken click id. */
const SESSION_ID_MAX = 128

/** The first usable value of each known id among the pairs. */
export function clickIdsFrom(pairs: Iterable<readonly [string, unknown]>): ClickIdRecord {
  const found: ClickIdRecord = {}
  for (const [rawName, rawValue] of pairs) {
    if (typeof rawValue !== 'string') continue
    const key = rawName.trim().replace(/^_+/, '').toLowerCase()
    const cookie = COOKIES.get(key)
    const name = cookie?.name ?? BY_KEY.get(key)
    const value = rawValue.trim()
    const id = cookie ? cookie.read(value) : value
    if (name && id && id.length <= (name === 'dc_session_id' ? SESSION_ID_MAX : 2048) && !found[name]) found[name] = id
  }
  return found
}

/** Ids in a URL's query string; the URL may be relative (`/products/x?gclid=…`, as Shopify's landing_site). */
export function clickIdsFromUrl(url: unknown): ClickIdRecord {
  if (typeof url !== 'string' || !url.includes('?')) return {}
  try {
    return clickIdsFrom(new URL(url, 'https://landing.invalid/').searchParams)
  }
  catch {
    return {}
  }
}

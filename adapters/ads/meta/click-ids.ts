/**
 * Pure: Meta's click id (fbc) and browser id (fbp) as Meta's parameter builder accepts them
 * (capi-param-builder, the library Meta's fbp-and-fbc page recommends; README.md, "fbc and fbp").
 *
 * The builder reads an `_fbc`/`_fbp` value as `fb.<subdomain index>.<ms>.<payload>` with an optional fifth segment,
 * the appendix a parameter builder adds: a two-letter language token (v1) or eight base64url characters that decode
 * to six bytes (format 1, a language index 1–6, then kind and library version). Any other value it drops, and so
 * does dcgate. A value that passes is sent exactly as the browser or the caller had it: dcgate does not add an
 * appendix of its own, because the appendix names the library that made the value, and dcgate is not that library.
 */

/** Language tokens the builder knows, in its index order (its SUPPORTED_PARAM_BUILDER_LANGUAGES_TOKEN). */
const LANGUAGE_TOKENS = ['AQ', 'Ag', 'Aw', 'BA', 'BQ', 'Bg'] as const
const DIGITS = /^\d+$/
const BASE64URL = /^[A-Za-z0-9_-]+$/

/** The fbc or fbp value as Meta's parameter builder would pass it on, or undefined where it would drop it. */
export function toMetaClickId(value: string | undefined): string | undefined {
  if (!value) return undefined
  const segments = value.split('.')
  if (segments.length !== 4 && segments.length !== 5) return undefined
  const [prefix, subdomainIndex, time, payload, appendix] = segments
  if (prefix !== 'fb' || !DIGITS.test(subdomainIndex!) || !DIGITS.test(time!) || !payload) return undefined
  if (appendix !== undefined && !isAppendix(appendix)) return undefined
  return value
}

function isAppendix(appendix: string): boolean {
  if (appendix.length === 2) return (LANGUAGE_TOKENS as readonly string[]).includes(appendix)
  if (appendix.length !== 8 || !BASE64URL.test(appendix)) return false
  const bytes = Buffer.from(appendix, 'base64url')
  return bytes.length === 6 && bytes[0] === 1 && bytes[1]! >= 1 && bytes[1]! <= LANGUAGE_TOKENS.length
}

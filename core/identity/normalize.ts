/**
 * Normalisation of personal data before it is hashed: one pure function per field, each returning undefined for
 * input that is empty or not of the field's shape, so nothing empty or malformed is ever hashed.
 * The rules and their sources are in ./README.md.
 */
import { createRequire } from 'node:module'
import type * as PhoneLibrary from 'libphonenumber-js'
import type { CountryCode } from 'libphonenumber-js'

let phoneLibrary: typeof PhoneLibrary | undefined
/** Loaded with the first phone number: its code and metadata are memory a server that sees none never needs. */
const phones = (): typeof PhoneLibrary => (phoneLibrary ??= createRequire(import.meta.url)('libphonenumber-js') as typeof PhoneLibrary)

/** Strings as given; finite numbers as text, since JSON bodies often carry a zip code or a phone as a number. */
function toText(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw)
  return undefined
}

/** Lowercase, UTF-8 NFC (so "e" + combining acute and "é" hash alike), and only what `keep` matches. */
function lowerAndKeep(raw: unknown, keep: RegExp): string | undefined {
  const text = toText(raw)?.toLowerCase().normalize('NFC').replace(keep, '')
  return text || undefined
}
const NOT_LETTER_OR_DIGIT = /[^\p{L}\p{M}\p{N}]/gu
const NOT_LETTER = /[^\p{L}\p{M}]/gu

/** Lookup key for tables of names: letters only, accents dropped ("Québec" → "quebec"). */
function nameKey(text: string): string {
  return text.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').replace(/[^a-z]/g, '')
}

// One local part (≤ 64 characters), one @, a domain of dotted labels ending in a label of two or more characters.
const EMAIL_SHAPE = /^[^\s@]{1,64}@(?:[^\s@.]+\.)+[^\s@.]{2,}$/u

/** Trimmed and lowercased. Inner whitespace is removed too (Google's rule); undefined when it is not an email. */
export function normalizeEmail(raw: unknown): string | undefined {
  const text = toText(raw)?.replace(/\s+/gu, '').toLowerCase().normalize('NFC')
  return text && EMAIL_SHAPE.test(text) ? text : undefined
}

const GOOGLE_MAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com'])

/**
 * Google's variant of an address already passed through normalizeEmail. For gmail.com and googlemail.com only, the
 * local part loses every dot and any "+suffix"; other domains are left as they are, since their mail servers may
 * treat dots and plus signs as significant. (Google Data Manager API "Format user data"; README.md has the detail.)
 */
export function normalizeEmailForGoogle(normalized: string): string {
  const at = normalized.lastIndexOf('@')
  const domain = normalized.slice(at + 1)
  if (at < 1 || !GOOGLE_MAIL_DOMAINS.has(domain)) return normalized
  const local = (normalized.slice(0, at).split('+')[0] ?? '').replaceAll('.', '')
  return local ? `${local}@${domain}` : normalized
}

/** Microsoft UET CAPI `em`: every dot and any `+alias` removed from the local part, whatever the domain. */
export function normalizeEmailForMicrosoft(normalized: string): string {
  return rewriteLocalPart(normalized, (local) => (local.split('+')[0] ?? '').replaceAll('.', ''))
}

/** Reddit CAPI: `+alias` removed, then every character that is not a letter or digit removed from the local part. */
export function normalizeEmailForReddit(normalized: string): string {
  return rewriteLocalPart(normalized, (local) => (local.split('+')[0] ?? '').replace(NOT_LETTER_OR_DIGIT, ''))
}

/** The address with its local part rewritten; unchanged when the rewrite would leave the local part empty. */
function rewriteLocalPart(normalized: string, rewrite: (local: string) => string): string {
  const at = normalized.lastIndexOf('@')
  if (at < 1) return normalized
  const local = rewrite(normalized.slice(0, at))
  return local ? `${local}${normalized.slice(at)}` : normalized
}

// "(+1)2133734253", "( +44 ) 20…": a country code wrapped in parentheses, which libphonenumber does not read.
const WRAPPED_COUNTRY_CODE = /^\(\s*(\+\d{1,3})\s*\)/

/** The libphonenumber country for a country given in any form normalizeCountry accepts. */
function toPhoneCountry(country: string | undefined): CountryCode | undefined {
  const code = normalizeCountry(country)?.toUpperCase()
  return code && phones().isSupportedCountry(code) ? code : undefined
}

/**
 * E.164 with the leading "+" ("+16505551212"), or undefined when the input is not a valid number. National numbers
 * ("(650) 555-1212", "030 1234567") need `defaultCountry` (ISO alpha-2 or a country name); numbers written with "+",
 * the "00" international prefix, or as digits with the country code ("16505551212") do not. Extensions are dropped. Validity is judged by libphonenumber-js with its
 * default ("min") metadata: country calling code, leading digits and length, not the full digit patterns, so newly
 * allocated ranges are not rejected by an older metadata release. Written forms read too: full-width digits (NFKC),
 * a "tel:" prefix, and a country code in parentheses ("(+1)2133734253", TikTok's example).
 */
export function normalizePhone(raw: unknown, defaultCountry?: string): string | undefined {
  let text = toText(raw)?.normalize('NFKC').trim().replace(/^tel:/i, '').replace(WRAPPED_COUNTRY_CODE, '$1 ')
  if (!text) return undefined
  if (text.startsWith('00')) text = `+${text.slice(2)}`
  const country = toPhoneCountry(defaultCountry)
  // Without a country, digits can only be read as international: "16505551212" is Meta's own format.
  if (!country && !text.startsWith('+')) text = `+${text}`
  const parsed = phones().parsePhoneNumberFromString(text, { defaultCountry: country, extract: false })
  return parsed?.isValid() ? parsed.number : undefined
}

// Titles before a name and generational or degree suffixes after it, which Google says to leave out ("Mrs.", "Jr.").
const NAME_PREFIXES = new Set(['mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'rev', 'sir', 'dame', 'mme', 'mlle'])
const NAME_SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv', 'phd', 'md', 'esq'])

/**
 * First or last name: lowercase, no punctuation, symbols or spaces; letters of any script kept, in UTF-8 NFC.
 * A leading title and a trailing suffix are dropped when another word remains ("Mrs. Jane" → "jane", "Smith Jr." →
 * "smith"); a name that is only such a word stays ("Sir" → "sir").
 */
export function normalizeName(raw: unknown): string | undefined {
  const words = toText(raw)?.toLowerCase().normalize('NFC').split(/[\s.,]+/).filter((word) => word !== '')
  if (!words) return undefined
  if (words.length > 1 && NAME_PREFIXES.has(words[0]!)) words.shift()
  if (words.length > 1 && NAME_SUFFIXES.has(words[words.length - 1]!)) words.pop()
  return lowerAndKeep(words.join(' '), NOT_LETTER_OR_DIGIT)
}

/** City: lowercase letters of any script only ("Menlo Park" → "menlopark", "São Paulo" → "sãopaulo"). */
export function normalizeCity(raw: unknown): string | undefined {
  return lowerAndKeep(raw, NOT_LETTER)
}

const US_STATES =
  'alabama:al alaska:ak arizona:az arkansas:ar california:ca colorado:co connecticut:ct delaware:de florida:fl ' +
  'georgia:ga hawaii:hi idaho:id illinois:il indiana:in iowa:ia kansas:ks kentucky:ky louisiana:la maine:me ' +
  'maryland:md massachusetts:ma michigan:mi minnesota:mn mississippi:ms missouri:mo montana:mt nebraska:ne ' +
  'nevada:nv newhampshire:nh newjersey:nj newmexico:nm newyork:ny northcarolina:nc northdakota:nd ohio:oh ' +
  'oklahoma:ok oregon:or pennsylvania:pa rhodeisland:ri southcarolina:sc southdakota:sd tennessee:tn texas:tx ' +
  'utah:ut vermont:vt virginia:va washington:wa westvirginia:wv wisconsin:wi wyoming:wy ' +
  'districtofcolumbia:dc washingtondc:dc puertorico:pr guam:gu americansamoa:as northernmarianaislands:mp ' +
  'usvirginislands:vi unitedstatesvirginislands:vi'
const CANADIAN_PROVINCES =
  'alberta:ab britishcolumbia:bc manitoba:mb newbrunswick:nb newfoundlandandlabrador:nl newfoundland:nl ' +
  'novascotia:ns ontario:on princeedwardisland:pe quebec:qc saskatchewan:sk northwestterritories:nt nunavut:nu ' +
  'yukon:yt yukonterritory:yt'
const STATE_CODES = new Map(
  `${US_STATES} ${CANADIAN_PROVINCES}`.split(' ').map(pair => pair.split(':') as [string, string]),
)

/**
 * State or province: lowercase letters only; a US state's or Canadian province's full name becomes its two-letter
 * code ("California" → "ca", "Québec" → "qc"). Other regions keep their normalised name ("Bayern" → "bayern").
 */
export function normalizeState(raw: unknown): string | undefined {
  const text = lowerAndKeep(raw, NOT_LETTER)
  return text && (STATE_CODES.get(nameKey(text)) ?? text)
}

/**
 * Postal code: lowercase, letters and digits only ("SW1A 1AA" → "sw1a1aa"). US codes keep their first five digits
 * ("94025-1234" → "94025"), and a US code that lost its leading zeros in a spreadsheet is padded ("2134" → "02134").
 * Without a country, a nine-digit ZIP+4 is taken as US.
 */
export function normalizeZip(raw: unknown, country?: string): string | undefined {
  const text = lowerAndKeep(raw, NOT_LETTER_OR_DIGIT)
  if (!text) return undefined
  const code = normalizeCountry(country)
  if (code === 'us') {
    if (/^\d{5}/.test(text)) return text.slice(0, 5)
    return /^\d{3,4}$/.test(text) ? text.padStart(5, '0') : undefined
  }
  return code === undefined && /^\d{9}$/.test(text) ? text.slice(0, 5) : text
}

// CLDR region codes that are not ISO 3166-1 assigned countries (groupings, exceptional reservations, test codes).
const NOT_COUNTRIES = new Set(['AC', 'CP', 'DG', 'EA', 'EU', 'EZ', 'IC', 'QO', 'TA', 'UN', 'XA', 'XB', 'ZZ'])
const NAME_LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt']
const COUNTRY_ALIASES: Record<string, string> = {
  usa: 'us', unitedstatesofamerica: 'us', america: 'us', greatbritain: 'gb', england: 'gb', scotland: 'gb',
  wales: 'gb', northernireland: 'gb', holland: 'nl', turkey: 'tr', czechrepublic: 'cz', ivorycoast: 'ci',
  swaziland: 'sz', macedonia: 'mk', burma: 'mm',
}
let countryKeys: Map<string, string> | undefined

/**
 * Every accepted spelling → alpha-2 code, built once from the runtime's own CLDR data: each code, with replaced
 * ones mapped to their successor by Intl.Locale ("UK" → gb, "DD" → de); the long and short names of the current
 * codes in a few languages (Intl.DisplayNames); then a few common aliases.
 */
function countryLookup(): Map<string, string> {
  if (countryKeys) return countryKeys
  const keys = new Map<string, string>()
  const A = 'A'.charCodeAt(0)
  const codes = Array.from({ length: 26 * 26 }, (_, i) => String.fromCharCode(A + Math.floor(i / 26), A + (i % 26)))
  const english = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' })
  for (const code of codes) {
    const current = new Intl.Locale('und', { region: code }).region ?? code
    if (english.of(code) !== undefined && !NOT_COUNTRIES.has(current)) keys.set(code.toLowerCase(), current.toLowerCase())
  }
  const valid = [...new Set(keys.values())].map(code => code.toUpperCase())
  for (const locale of NAME_LOCALES) {
    for (const style of ['long', 'short'] as const) {
      const names = new Intl.DisplayNames([locale], { type: 'region', style, fallback: 'none' })
      for (const code of valid) {
        const key = nameKey(names.of(code) ?? '')
        if (key.length > 2 && !keys.has(key)) keys.set(key, code.toLowerCase())
      }
    }
  }
  for (const [alias, code] of Object.entries(COUNTRY_ALIASES)) keys.set(alias, code)
  return (countryKeys = keys)
}

/** ISO 3166-1 alpha-2, lowercase: "US", "us", "United States", "USA", "Deutschland" → the code; else undefined. */
export function normalizeCountry(raw: unknown): string | undefined {
  const text = toText(raw)?.trim()
  return text ? countryLookup().get(nameKey(text)) : undefined
}

/** The integrator's own user id: trimmed only, since ids may be case-sensitive. */
export function normalizeExternalId(raw: unknown): string | undefined {
  return toText(raw)?.trim() || undefined
}

/**
 * The one place personal data is hashed (CONVENTIONS.md rule 9): normalise each field with ./normalize.ts, then
 * SHA-256 it into the variants of HashedIdentity that the ad platforms ask for. Values that already are a SHA-256
 * hex digest are passed through, lowercased, never hashed twice.
 */
import { createHash } from 'node:crypto'
import type { HashedIdentity } from '../delivery/types.ts'
import {
  normalizeCity, normalizeCountry, normalizeEmail, normalizeEmailForGoogle, normalizeEmailForMicrosoft, normalizeEmailForReddit,
  normalizeExternalId, normalizeName,
  normalizePhone, normalizeState, normalizeZip,
} from './normalize.ts'

/** Personal data as an integrator sends it: plain text, or already SHA-256 hex. */
export interface IdentityTraits {
  email?: string
  phone?: string
  first_name?: string
  last_name?: string
  /**
   * Accepted but not hashed: HashedIdentity has no street field, because none of the APIs our adapters call takes a
   * hashed street address. Meta CAPI user_data, TikTok, LinkedIn, Microsoft (UET CAPI and offline conversions), Reddit,
   * Pinterest and X have no street key; Google's hashed_street_address is taken only by ConversionAdjustmentUploadService
   * (enhanced conversions for web), not by the uploadClickConversions call the Google adapter makes.
   */
  street?: string
  postal_code?: string
  /** Kept only in clear, for a platform that takes it (LinkedIn's userInfo): core/identity/clear-traits.ts. */
  company?: string
  title?: string
  city?: string
  state?: string
  country?: string
  external_id?: string
}

export interface HashIdentityOptions {
  /** The country assumed for national phone numbers and ZIP codes when the traits give none (alpha-2 or a name). */
  defaultCountry?: string
}

const SHA256_HEX = /^[0-9a-f]{64}$/

/** SHA-256 of the UTF-8 bytes, as 64 lowercase hex characters. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex')
}

/** Exactly 64 hex characters, either case; nothing before or after (a longer string that contains one is not). */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value.toLowerCase())
}

/** The input as a lowercase digest when it already is one (surrounding whitespace ignored), else undefined. */
function preHashed(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined
  const text = raw.trim().toLowerCase()
  return SHA256_HEX.test(text) ? text : undefined
}

function hashWith(raw: unknown, normalize: (raw: unknown) => string | undefined): string | undefined {
  const hashed = preHashed(raw)
  if (hashed) return hashed
  const normalized = normalize(raw)
  return normalized ? sha256Hex(normalized) : undefined
}

/**
 * Normalise and hash every field present in `traits` into the HashedIdentity variants it fills. Fields that are
 * empty or invalid (an unparseable phone, a string that is not an email) are left out rather than hashed.
 * National phone numbers and ZIP codes are read in the traits' own country when given, else `defaultCountry`.
 */
export function hashIdentity(traits: IdentityTraits, options: HashIdentityOptions = {}): HashedIdentity {
  const ownCountry = preHashed(traits.country) ? undefined : normalizeCountry(traits.country)
  const country = ownCountry ?? normalizeCountry(options.defaultCountry)
  const fields: HashedIdentity = {
    ...hashEmail(traits.email),
    ...hashPhone(traits.phone, country),
    firstName: hashWith(traits.first_name, normalizeName),
    lastName: hashWith(traits.last_name, normalizeName),
    city: hashWith(traits.city, normalizeCity),
    state: hashWith(traits.state, normalizeState),
    zip: hashWith(traits.postal_code, raw => normalizeZip(raw, country)),
    country: hashWith(traits.country, normalizeCountry),
    externalId: hashWith(traits.external_id, normalizeExternalId),
  }
  const identity: HashedIdentity = {}
  for (const [key, value] of Object.entries(fields) as [keyof HashedIdentity, string | undefined][]) {
    if (value !== undefined) identity[key] = value
  }
  return identity
}

type EmailVariants = Pick<HashedIdentity, 'email' | 'emailGoogle' | 'emailMicrosoft' | 'emailReddit'>

function hashEmail(raw: unknown): EmailVariants {
  const hashed = preHashed(raw)
  if (hashed) return { email: hashed, emailGoogle: hashed, emailMicrosoft: hashed, emailReddit: hashed }
  const email = normalizeEmail(raw)
  if (!email) return {}
  return {
    email: sha256Hex(email),
    emailGoogle: sha256Hex(normalizeEmailForGoogle(email)),
    emailMicrosoft: sha256Hex(normalizeEmailForMicrosoft(email)),
    emailReddit: sha256Hex(normalizeEmailForReddit(email)),
  }
}

function hashPhone(raw: unknown, country: string | undefined): Pick<HashedIdentity, 'phoneE164' | 'phoneDigits'> {
  const hashed = preHashed(raw)
  if (hashed) return { phoneE164: hashed, phoneDigits: hashed }
  const e164 = normalizePhone(raw, country)
  return e164 ? { phoneE164: sha256Hex(e164), phoneDigits: sha256Hex(e164.slice(1)) } : {}
}

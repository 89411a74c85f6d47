/**
 * The one place personal data is hashed (CONVENTIONS.md rule 9): normalise each field with ./normalize.ts, then
 * SHA-256 it into the variants of HashedIdentity that the ad platforms ask for. Values that already are a SHA-256
 * hex digest are passed through, lowercased, never hashed twice.
 */
import { hash } from 'node:crypto'
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

// Either case: no character outside ASCII lowercases into [0-9a-f], so this is the lowercase test without the copy.
const SHA256_HEX = /^[0-9a-fA-F]{64}$/

/** SHA-256 of the UTF-8 bytes, as 64 lowercase hex characters (one-shot: no Hash object per value). */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex')
}

/** Exactly 64 hex characters, either case; nothing before or after (a longer string that contains one is not). */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value)
}

/** The input as a lowercase digest when it already is one (surrounding whitespace ignored), else undefined. */
function preHashed(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined
  const text = raw.trim()
  return SHA256_HEX.test(text) ? text.toLowerCase() : undefined
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
  const identity: HashedIdentity = {}
  hashEmail(identity, traits.email)
  hashPhone(identity, traits.phone, country)
  // Only the fields present are set, in this order (the order of the stored identity's keys).
  setDefined(identity, 'firstName', hashWith(traits.first_name, normalizeName))
  setDefined(identity, 'lastName', hashWith(traits.last_name, normalizeName))
  setDefined(identity, 'city', hashWith(traits.city, normalizeCity))
  setDefined(identity, 'state', hashWith(traits.state, normalizeState))
  setDefined(identity, 'zip', hashWith(traits.postal_code, raw => normalizeZip(raw, country)))
  setDefined(identity, 'country', hashWith(traits.country, normalizeCountry))
  setDefined(identity, 'externalId', hashWith(traits.external_id, normalizeExternalId))
  return identity
}

function setDefined(identity: HashedIdentity, key: keyof HashedIdentity, value: string | undefined): void {
  if (value !== undefined) identity[key] = value
}

/** Sets the email's four variants, or none. */
function hashEmail(identity: HashedIdentity, raw: unknown): void {
  const hashed = preHashed(raw)
  if (hashed) {
    identity.email = identity.emailGoogle = identity.emailMicrosoft = identity.emailReddit = hashed
    return
  }
  const email = normalizeEmail(raw)
  if (!email) return
  identity.email = sha256Hex(email)
  identity.emailGoogle = sha256Hex(normalizeEmailForGoogle(email))
  identity.emailMicrosoft = sha256Hex(normalizeEmailForMicrosoft(email))
  identity.emailReddit = sha256Hex(normalizeEmailForReddit(email))
}

/** Sets the phone's two variants, or none. */
function hashPhone(identity: HashedIdentity, raw: unknown, country: string | undefined): void {
  const hashed = preHashed(raw)
  if (hashed) {
    identity.phoneE164 = identity.phoneDigits = hashed
    return
  }
  const e164 = normalizePhone(raw, country)
  if (!e164) return
  identity.phoneE164 = sha256Hex(e164)
  identity.phoneDigits = sha256Hex(e164.slice(1))
}

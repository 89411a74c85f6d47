/**
 * Readers for webhook bodies: each takes a value and the field's path, returns it typed, and throws a
 * SourceInputError naming the path when the value has the wrong shape. `null` counts as absent everywhere:
 * vendors send null for fields they have no value for.
 */
import { isIP } from 'node:net'
import { SourceInputError } from '../../core/registry.ts'

export type JsonObject = Record<string, unknown>

export function fail(path: string, message: string): never {
  throw new SourceInputError(`${path}: ${message}`)
}

export function objectAt(value: unknown, path: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) fail(path, 'must be an object')
  return value as JsonObject
}

export function listAt(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) fail(path, 'must be an array')
  return value
}

/** Trimmed text; numbers and booleans are written out (vendors send zip codes and names either way); '' is absent. */
export function textAt(value: unknown, path: string, max = 2048): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value !== 'string') fail(path, 'must be a string')
  const text = value.trim()
  if (text.length > max) fail(path, `must be at most ${max} characters`)
  return text || undefined
}

/**
 * An id as text. Integers beyond 2^53 arrive as digit strings (see readJsonObject), so Shopify's 18-digit ids keep
 * every digit; a number that is not a whole number could only be a rounded id and is refused.
 */
export function idAt(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) fail(path, 'must be a whole number or a string id')
    return String(value)
  }
  if (typeof value !== 'string') fail(path, 'must be a whole number or a string id')
  const id = value.trim()
  if (!/^[\w.:/-]{1,200}$/.test(id)) fail(path, 'must be an id of at most 200 letters, digits and _ . : / -')
  return id
}

export function requiredIdAt(value: unknown, path: string): string {
  return idAt(value, path) ?? fail(path, 'is required')
}

/** A decimal amount sent as a string ("29.35") or a number. */
export function moneyAt(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined
  const amount = typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value
  if (typeof amount !== 'number' || !Number.isFinite(amount)) fail(path, 'must be a decimal amount such as "29.35"')
  return amount
}

/** A count of items: a whole number from 0. */
export function countAt(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(path, 'must be a whole number, 0 or more')
  return value
}

/** ISO 4217 code, upper-cased. */
export function currencyAt(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value)) fail(path, 'must be a 3-letter currency code')
  return value.toUpperCase()
}

/** An ISO 8601 date-time. `assumeUtc` appends Z to one without a zone (WooCommerce's *_gmt fields). */
export function instantAt(value: unknown, path: string, assumeUtc = false): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) fail(path, 'must be an ISO 8601 date and time')
  const zoned = assumeUtc && !/(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? `${value}Z` : value
  const date = new Date(zoned)
  if (Number.isNaN(date.getTime())) fail(path, 'must be an ISO 8601 date and time')
  return date
}

/** Unix seconds, as Stripe sends `created`. */
export function unixSecondsAt(value: unknown, path: string): Date | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > 253_402_300_799) fail(path, 'must be unix seconds')
  return new Date(value * 1000)
}

/** The buyer's IP when it is one; anything else is dropped rather than refusing a paid order over it. */
export function ipAt(value: unknown): string | undefined {
  // 45: the longest address written out; an IPv6 zone (fe80::1%eth0) may be any length and fits no column.
  return typeof value === 'string' && value.trim().length <= 45 && isIP(value.trim()) !== 0 ? value.trim() : undefined
}

/** The object without its undefined fields, so conversions compare and serialise cleanly. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T
}

/** At most `max` characters, cut between code points (a description that must fit its column, never an id). */
export function clipped(text: string, max: number): string {
  if (text.length <= max) return text
  return Array.from(text).slice(0, max).join('')
}

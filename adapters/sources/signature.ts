/** HMAC-SHA256 and constant-time comparison shared by every source's verify. */
import { createHmac, timingSafeEqual } from 'node:crypto'

export function hmacSha256(secret: string, ...parts: (string | Uint8Array)[]): Buffer {
  const hmac = createHmac('sha256', secret)
  for (const part of parts) hmac.update(part)
  return hmac.digest()
}

/**
 * Compares a computed signature with the one received without leaking, by its timing, how many leading
 * characters matched. Lengths differ only for a malformed header (the digest length is public), so that
 * case answers false without calling timingSafeEqual, which would throw.
 */
export function signaturesEqual(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8')
  const b = Buffer.from(received, 'utf8')
  if (a.length !== b.length) return false
  return timingSafeEqual(a, b)
}

/** The first of these headers that is present and not blank, trimmed (vendors renamed some headers over time). */
export function headerValue(headers: Headers, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers.get(name)?.trim()
    if (value) return value
  }
  return undefined
}

import { randomBytes } from 'node:crypto'

/** Public site key: `cop_` + 20 random URL-safe characters (120 bits); it appears in page source. */
export function generateCopKey(): string {
  return `cop_${randomBytes(15).toString('base64url')}`
}

/** Release secret for the qualification gate URL: 32 random bytes, URL-safe. */
export function generateReleaseSecret(): string {
  return randomBytes(32).toString('base64url')
}

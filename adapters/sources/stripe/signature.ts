/**
 * Stripe-Signature: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. The signed payload is `<t>.<raw body>`, the key the
 * endpoint's whsec_… secret as text; any v1 may match (there are two while a secret is rolled); other schemes
 * (v0 is test-only) are ignored. https://docs.stripe.com/webhooks#verify-manually
 */
import { hmacSha256, signaturesEqual } from '../signature.ts'

interface ParsedHeader {
  timestamp: number
  signatures: string[]
}

export function parseStripeSignature(header: string): ParsedHeader | undefined {
  let timestamp: number | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const at = part.indexOf('=')
    if (at < 0) continue
    const key = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    if (key === 't' && timestamp === undefined && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (key === 'v1' && value) signatures.push(value.toLowerCase())
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures }
}

/** True when a v1 signature matches and the timestamp is within `toleranceSeconds` of now, either side. */
export function verifyStripeSignature(raw: Uint8Array, header: string | undefined, secret: string, toleranceSeconds: number, now: Date): boolean {
  const parsed = header ? parseStripeSignature(header) : undefined
  if (!parsed) return false
  // Refuse replays of an old delivery, and clocks too far apart to tell.
  if (Math.abs(Math.floor(now.getTime() / 1000) - parsed.timestamp) > toleranceSeconds) return false
  const expected = hmacSha256(secret, `${parsed.timestamp}.`, raw).toString('hex')
  // Every candidate is compared, so the time taken does not tell which one matched.
  return parsed.signatures.map((signature) => signaturesEqual(expected, signature)).includes(true)
}

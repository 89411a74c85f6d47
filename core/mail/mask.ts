import { createHash } from 'node:crypto'

/**
 * An email address with most of it hidden, for logs, proof records and status pages: the first character of the
 * local part and of the domain's first label stay, the top-level domain stays ("ann.lee@example.co.uk" →
 * "a***@e***.co.uk"). Never enough to recover the address; enough for its owner to recognise it.
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@')
  if (at < 1) return '***'
  const local = email.slice(0, at)
  const domain = email.slice(at + 1)
  const dot = domain.indexOf('.')
  const host = dot > 0 ? domain.slice(0, dot) : domain
  const rest = dot > 0 ? domain.slice(dot) : ''
  return `${[...local][0]}***@${[...host][0] ?? ''}***${rest}`
}

/**
 * A masked address two people can still be told apart by, for the dashboard's lists: the first and last character of
 * the local part and of the domain's first label, the rest of the domain, and four hex digits of the address's SHA-256
 * ("jane@gmail.com" → "j***e@g***l.com ·1a2b"): 65,536 values, far too few to find an address by, enough that two
 * "j***e" rows differ.
 */
export function maskEmailDistinct(email: string): string {
  const at = email.lastIndexOf('@')
  if (at < 1) return '***'
  const local = [...email.slice(0, at)]
  const domain = email.slice(at + 1)
  const dot = domain.indexOf('.')
  const host = [...(dot > 0 ? domain.slice(0, dot) : domain)]
  const rest = dot > 0 ? domain.slice(dot) : ''
  const ends = (chars: string[]) => chars.length > 3 ? `${chars[0]}***${chars.at(-1)}` : `${chars[0] ?? ''}***`
  const hash = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 4)
  return `${ends(local)}@${ends(host)}${rest} ·${hash}`
}

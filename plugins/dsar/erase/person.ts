import { hashIdentity, isSha256Hex, sha256Hex } from '../../../core/identity/hash.ts'
import { normalizeEmail } from '../../../core/identity/normalize.ts'

/** What the `dsar:erase` hook carries. */
export interface EraseRequest { siteId: string, email: string, emailHash: string }

/** How the erase listeners recognise one person's data on one site. */
export interface Person {
  siteId: string
  /** The email as core/identity normalises it (trimmed, lower-case). */
  email: string
  /**
   * Hashes of exactly this address: SHA-256 of the normalised email (what visits, identified users and
   * `identity.email` of conversions store), plus the hook's emailHash when it is one.
   */
  exactHashes: string[]
  /** `identity.emailGoogle` of this address: for gmail.com the same mailbox however it was dotted or tagged. */
  googleHash: string
  /**
   * Every email hash variant core/identity makes (email, emailGoogle, emailMicrosoft, emailReddit). Matching is on
   * the exact and Google ones only: the Microsoft and Reddit variants drop dots and +tags on every domain, so they
   * are shared by different mailboxes (a.b@corp.com and ab@corp.com). They are erased from the rows that match.
   */
  variants: string[]
  /**
   * A case-insensitive PostgreSQL regular expression matching the email as text (as typed, URL-encoded) or any of
   * its hashes: free text (page URLs, event properties) holding one of them belongs to the person.
   */
  pattern: string
}

export function toPerson(request: EraseRequest): Person {
  const email = normalizeEmail(request.email) ?? request.email.trim().toLowerCase()
  const identity = hashIdentity({ email })
  const exact = sha256Hex(email)
  const given = isSha256Hex(request.emailHash) ? request.emailHash.toLowerCase() : undefined
  const variants = unique([identity.email, identity.emailGoogle, identity.emailMicrosoft, identity.emailReddit, exact])
  const texts = unique([email, encodeURIComponent(email).toLowerCase(), ...variants, given])
  return {
    siteId: request.siteId,
    email,
    exactHashes: unique([exact, given]),
    googleHash: identity.emailGoogle ?? exact,
    variants,
    pattern: texts.map(escapeRegex).join('|'),
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')
}

function unique(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => Boolean(v)))]
}

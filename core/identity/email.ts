/**
 * One mailbox, strictly: the address syntax every email input accepts (deletion requests, /identify, the email
 * check, conversion traits). A deletion mail goes to what a stranger typed, so the syntax leaves no room for a
 * second recipient ("a@example.com,root"), a display name ("\"Click here\" <a@example.com>"), a quoted local part,
 * a comment or a source route. The rules (README.md, "Email addresses"):
 *
 * - surrounding whitespace is trimmed; any other whitespace is refused;
 * - the local part is an RFC 5322 dot-atom in ASCII: letters, digits and !#$%&'*+/=?^_`{|}~- in runs joined by
 *   single dots, at most 64 characters; no quoted strings, no <>,;:"()[]\@;
 * - the domain has two labels or more; a label is letters, digits and inner hyphens, at most 63 characters. Labels
 *   may be written in punycode ("xn--bcher-kva") or in Unicode letters ("bücher"): Unicode is kept as typed
 *   (lowercased, NFC), since that is the form the hashes sent to ad platforms are made of. The last label has two
 *   characters or more and is not all digits (no IP addresses);
 * - the whole address is at most 254 characters with its domain in punycode (what goes on the wire).
 *
 * The canonical form is the trimmed address lowercased in Unicode NFC: exactly what normalizeEmail
 * (./normalize.ts) makes of it, so a canonical address hashes as it always did.
 */
import * as v from 'valibot'

export const MAX_EMAIL_LENGTH = 254
export const MAX_LOCAL_PART_LENGTH = 64
export const EMAIL_MESSAGE = 'must be one email address (name@example.com), without a name, list or spaces'

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?$/u
const ASCII_LABEL_LENGTH = 63

/** The canonical mailbox (trimmed, lowercased, NFC), or undefined when the input is not exactly one address. */
export function canonicalEmail(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 4 * MAX_EMAIL_LENGTH) return undefined
  const text = raw.trim().toLowerCase().normalize('NFC')
  const at = text.lastIndexOf('@')
  if (at < 1) return undefined
  const local = text.slice(0, at)
  const domain = text.slice(at + 1)
  if (local.length > MAX_LOCAL_PART_LENGTH || !LOCAL_PART.test(local)) return undefined
  const ascii = asciiDomain(domain)
  if (!ascii || local.length + 1 + ascii.length > MAX_EMAIL_LENGTH) return undefined
  return text
}

/** The domain in punycode when every label is well formed, else undefined. */
function asciiDomain(domain: string): string | undefined {
  const labels = domain.split('.')
  const last = labels[labels.length - 1] ?? ''
  if (labels.length < 2 || last.length < 2 || /^\d+$/.test(last) || !labels.every((label) => LABEL.test(label))) return undefined
  const ascii = toAscii(domain)
  if (!ascii || ascii.split('.').some((label) => label.length > ASCII_LABEL_LENGTH)) return undefined
  return ascii
}

/**
 * IDNA to ASCII by the WHATWG URL parser (UTS 46), which both Node and browsers have: the protocol schema that uses
 * this module is type-checked for the tracking script too. Undefined for a domain IDNA refuses.
 */
function toAscii(domain: string): string | undefined {
  try {
    return new URL(`http://${domain}/`).hostname || undefined
  }
  catch {
    return undefined
  }
}

/** The address with its domain in punycode: one key for one mailbox however its domain was written. */
export function emailKeyForm(canonical: string): string {
  const at = canonical.lastIndexOf('@')
  const domain = canonical.slice(at + 1)
  return `${canonical.slice(0, at)}@${toAscii(domain) ?? domain}`
}

/** A request field holding one mailbox: validated strictly, output in canonical form. */
export const MailboxSchema = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(MAX_EMAIL_LENGTH, `must be at most ${MAX_EMAIL_LENGTH} characters`),
  v.check((text) => canonicalEmail(text) !== undefined, EMAIL_MESSAGE),
  v.transform((text) => canonicalEmail(text)!),
)

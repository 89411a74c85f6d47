/**
 * Domains reserved for documentation and testing, which no one's real mailbox can use: the top-level names
 * `.test`, `.example`, `.invalid` and `.localhost` (RFC 2606 section 2, kept special by RFC 6761 section 6) and the
 * second-level names example.com, example.net and example.org (RFC 2606 section 3), each with every subdomain.
 * https://www.rfc-editor.org/rfc/rfc2606 and https://www.rfc-editor.org/rfc/rfc6761
 */
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost'])
const RESERVED_SECOND_LEVEL = new Set(['example.com', 'example.net', 'example.org'])

/** `domain` is lower-case (the email is normalised); a trailing root dot is ignored. */
export function isReservedDomain(domain: string): boolean {
  const labels = domain.replace(/\.$/, '').split('.')
  if (RESERVED_TLDS.has(labels.at(-1) ?? '')) return true
  return labels.length >= 2 && RESERVED_SECOND_LEVEL.has(labels.slice(-2).join('.'))
}

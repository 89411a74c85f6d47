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

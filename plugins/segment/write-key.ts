/**
 * The write key is the site's private key (`dcp_…`). Segment's HTTP API takes it as the HTTP Basic username with an
 * empty password, or as the body's `writeKey` (analytics-node sends both; RudderStack only Basic). A key in the
 * header wins; the two must agree when both are given, so a body cannot borrow another header's site.
 */
import type { H3Event } from 'h3'
import type { KeyVerifier } from '../../core/auth/verifier.ts'
import { apiError } from '../../core/http/errors.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'

const MISSING = 'Missing write key: send your private key as the HTTP Basic username (empty password)'

/** The key from `Authorization: Basic base64(key:)`; undefined without a Basic header; 401 for a broken one. */
export function basicUsername(header: string | null): string | undefined {
  const match = /^basic\s+(\S+)\s*$/i.exec(header?.trim() ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  // Segment's docs: username then a colon; a key encoded without the colon is still read, as Segment still reads it.
  const username = decoded.includes(':') ? decoded.slice(0, decoded.indexOf(':')) : decoded
  return username.trim() || undefined
}

/**
 * The site of the request's write key. With a Basic header the key is checked before the body is read (a stranger
 * cannot make us gunzip and parse 500 KB); a body key alone is checked once the body is parsed.
 */
export async function siteOfWriteKey(
  event: H3Event, readBody: () => Promise<Record<string, unknown>>, keys: KeyVerifier, report: (error: unknown) => void,
): Promise<{ site: ActiveSite, body: Record<string, unknown> }> {
  const fromHeader = basicUsername(event.req.headers.get('authorization'))
  const headerSite = fromHeader === undefined ? undefined : await siteOf(fromHeader, keys, report)
  const body = await readBody()
  if (body.writeKey !== undefined && typeof body.writeKey !== 'string') throw apiError(401, { message: 'Invalid write key: writeKey must be a string' })
  const fromBody = typeof body.writeKey === 'string' ? body.writeKey.trim() || undefined : undefined
  if (fromHeader && fromBody && fromHeader !== fromBody) throw apiError(401, { message: 'Invalid write key: the Basic username and the body\'s writeKey differ' })
  if (headerSite) return { site: headerSite, body }
  if (!fromBody) throw apiError(401, { message: MISSING }, { 'www-authenticate': 'Basic realm="dcgate"' })
  return { site: await siteOf(fromBody, keys, report), body }
}

async function siteOf(key: string, keys: KeyVerifier, report: (error: unknown) => void): Promise<ActiveSite> {
  let verified = keys.peek(key)
  try {
    if (verified === undefined) verified = await keys.verify(key)
  }
  catch (error) {
    report(error)
    // Temporary (database or Redis): a 5xx, which Segment's and RudderStack's clients retry.
    throw apiError(503, { message: 'API key validation failed' })
  }
  if (!verified) throw apiError(401, { message: 'Invalid API key' })
  if (verified.site.status === 'paused') throw apiError(402, { message: 'This site is paused; nothing was sent', code: 'APP_INACTIVE' })
  return verified.site
}

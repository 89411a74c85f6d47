/**
 * The OAuth 2.0 refresh-token grant (RFC 6749 §6) for the adapters that hold a long-lived refresh token: Google Ads,
 * LinkedIn, Microsoft Advertising and Salesforce. One form POST to the token endpoint with the client's id and
 * secret in the body (client_secret_post), under the caller's fetch and abort signal; the access token is cached,
 * keyed by a hash of the credentials (never a secret: the cache may be a shared Redis), until shortly before its
 * `expires_in` ends.
 *
 * Hand-written rather than oauth4webapi: that library refuses a token answer without `token_type`, which LinkedIn's
 * refresh answer leaves out, and accepts http endpoints (our fakes) only behind an opt-out.
 */
import { createHash } from 'node:crypto'
import type { AuthContext } from '../../core/registry.ts'
import { isObject, parseJson } from './helpers.ts'

export interface RefreshGrant {
  tokenUrl: string
  clientId: string
  /** Left out of the form when the client has none (a Salesforce connected app may not require it). */
  clientSecret?: string
  refreshToken: string
  /** Sent as `scope` when given: the Microsoft identity platform asks for the scopes again on each refresh. */
  scope?: string
}

/** The token endpoint's answer, read whole. */
export interface TokenAnswer {
  status: number
  headers: Headers
  text: string
  /** The body parsed as JSON; undefined when it is not JSON (a proxy's HTML page). */
  json: unknown
}

export interface OAuth2ErrorDetails {
  /** The HTTP status, or null when no answer arrived. */
  status: number | null
  retryable: boolean
  /** The OAuth error code (invalid_grant…), when the answer carried one. */
  code?: string
  /** The answer, when one arrived: a caller may classify it further (Retry-After, a vendor body). */
  answer?: TokenAnswer
}

/** The token endpoint refused or failed; `retryable` is false for answers only the operator can fix (invalid_grant…). */
export class OAuth2Error extends Error {
  override name = 'OAuth2Error'
  readonly status: number | null
  readonly retryable: boolean
  readonly code: string | undefined
  readonly answer: TokenAnswer | undefined
  constructor(message: string, details: OAuth2ErrorDetails, options?: ErrorOptions) {
    super(message, options)
    this.status = details.status
    this.retryable = details.retryable
    this.code = details.code
    this.answer = details.answer
  }
}

export interface TokenPolicy {
  /** Names the vendor in messages: "Google" → `Google OAuth refused the refresh token with invalid_grant…`. */
  vendor: string
  /** Where this grant's token is cached; build it with `tokenCacheKey`. */
  cacheKey: string
  /** Renew this long before the answer's expires_in ends, so a token is never sent in its last moments. */
  marginSeconds: number
  /** Cache lifetime when the answer names none (Salesforce's session timeout is the org's); without it, not cached. */
  fallbackLifetimeSeconds?: number
  /** Answer fields the caller needs besides the token (cached name → answer field, e.g. instanceUrl → instance_url). */
  keep?: Readonly<Record<string, string>>
  /** What to do about an OAuth error code, shown in parentheses after the vendor's description. */
  hint?: (code: string, description: string) => string | undefined
  /** Throws to refuse a token before it is cached (LinkedIn: a token without the scope every call needs). */
  check?: (body: Record<string, any>, status: number) => void
  /** Skip the cached token: the vendor refused it before it expired. */
  renew?: boolean
  /** The class thrown, so each adapter keeps its own error name. */
  errorClass?: new (message: string, details: OAuth2ErrorDetails, options?: ErrorOptions) => OAuth2Error
}

export interface AccessToken {
  accessToken: string
  /** The `keep` fields of the answer, under their cached names. */
  fields: Record<string, string>
  /** A new refresh token the server issued in this exchange (Salesforce and Microsoft rotate them); the caller keeps it in `ctx.credentials`. */
  rotatedRefreshToken?: string
}

/** A cache key for these credentials: a hash of them, never the secret itself. */
export function tokenCacheKey(prefix: string, ...credentials: string[]): string {
  return `${prefix}:${createHash('sha256').update(credentials.join('\n')).digest('hex').slice(0, 32)}`
}

/** The cached access token for this grant, or a fresh one from the token endpoint. */
export async function resolveAccessToken(grant: RefreshGrant, ctx: AuthContext, policy: TokenPolicy): Promise<AccessToken> {
  if (!policy.renew) {
    const cached = fromCache(await ctx.cache.get(policy.cacheKey), policy.keep)
    if (cached) return cached
  }
  const answer = await requestToken(grant, ctx, policy)
  const body = isObject(answer.json) ? answer.json : undefined
  const token = body && answer.status >= 200 && answer.status < 300 ? readToken(body, policy.keep) : undefined
  if (!body || !token) throw toOAuth2Error(answer, body, policy)
  policy.check?.(body, answer.status)
  const expiresIn = Number(body.expires_in)
  const ttl = body.expires_in != null && Number.isFinite(expiresIn) ? expiresIn - policy.marginSeconds : policy.fallbackLifetimeSeconds ?? 0
  if (ttl > 0) await ctx.cache.set(policy.cacheKey, toCache(token, policy.keep), ttl)
  const rotated = typeof body.refresh_token === 'string' && body.refresh_token && body.refresh_token !== grant.refreshToken ? body.refresh_token : undefined
  return rotated ? { ...token, rotatedRefreshToken: rotated } : token
}

// --- internal ---

async function requestToken(grant: RefreshGrant, ctx: AuthContext, policy: TokenPolicy): Promise<TokenAnswer> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant.refreshToken, client_id: grant.clientId })
  if (grant.clientSecret) form.set('client_secret', grant.clientSecret)
  if (grant.scope) form.set('scope', grant.scope)
  try {
    const response = await ctx.fetch(grant.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: ctx.signal,
    })
    const text = await response.text().catch(() => '')
    return { status: response.status, headers: response.headers, text, json: parseJson(text) }
  }
  catch (error) {
    const ErrorClass = policy.errorClass ?? OAuth2Error
    const reason = error instanceof Error ? error.message : String(error)
    throw new ErrorClass(`${policy.vendor} OAuth token request to ${grant.tokenUrl} failed: ${reason}`, { status: null, retryable: true }, { cause: error })
  }
}

function readToken(body: Record<string, any>, keep: TokenPolicy['keep'] = {}): AccessToken | undefined {
  return pickToken(body.access_token, body, Object.entries(keep))
}

/** The token and its fields (cached name ← field of `source`), or undefined when one is missing. */
function pickToken(accessToken: unknown, source: Record<string, any>, fields: [string, string][]): AccessToken | undefined {
  if (typeof accessToken !== 'string' || !accessToken) return undefined
  const picked: Record<string, string> = {}
  for (const [name, field] of fields) {
    if (typeof source[field] !== 'string' || !source[field]) return undefined
    picked[name] = source[field]
  }
  return { accessToken, fields: picked }
}

/** `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}` → a message saying what to do. */
function toOAuth2Error(answer: TokenAnswer, body: Record<string, any> | undefined, policy: TokenPolicy): OAuth2Error {
  const ErrorClass = policy.errorClass ?? OAuth2Error
  const { status } = answer
  const retryable = status >= 500 || status === 429 || status === 408
  if (typeof body?.error === 'string') {
    // One line, bounded: Microsoft's description spans lines (trace and correlation ids), and it lands in the report.
    const description = typeof body.error_description === 'string' ? body.error_description.replace(/\s+/g, ' ').trim().slice(0, 500) : ''
    const hint = policy.hint?.(body.error, description)
    const message = `${policy.vendor} OAuth refused the refresh token with ${body.error}${description ? `: ${description}` : ''}${hint ? ` (${hint})` : ''}`
    return new ErrorClass(message, { status, retryable, code: body.error, answer })
  }
  const snippet = answer.text.replace(/\s+/g, ' ').trim().slice(0, 200)
  return new ErrorClass(`${policy.vendor} OAuth answered HTTP ${status} without an access token${snippet ? `: ${snippet}` : ''}`, { status, retryable, answer })
}

/** Cached as the bare token, or as JSON with the kept fields, so instances of the last release read it too. */
function toCache(token: AccessToken, keep: TokenPolicy['keep']): string {
  return keep ? JSON.stringify({ accessToken: token.accessToken, ...token.fields }) : token.accessToken
}

function fromCache(value: string | null, keep: TokenPolicy['keep']): AccessToken | undefined {
  if (!value) return undefined
  if (!keep) return { accessToken: value, fields: {} }
  const json = parseJson(value)
  return isObject(json) ? pickToken(json.accessToken, json, Object.keys(keep).map((name) => [name, name])) : undefined
}

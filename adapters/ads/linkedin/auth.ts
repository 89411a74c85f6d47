/**
 * OAuth 2.0 for the Conversions API. Either a static access token (valid 60 days, renewed by hand), or a programmatic
 * refresh token (valid 365 days) that is exchanged at LinkedIn's token endpoint for an access token, cached so one
 * exchange serves every request until shortly before it expires.
 */
import { createHash } from 'node:crypto'
import type { AuthContext } from '../../../core/registry.ts'
import { parseJsonObject } from '../../shared/helpers.ts'
import type { LinkedInOptions } from './index.ts'

/** Renew this long before LinkedIn's expiry, so a token is never sent in its last minutes. */
const EXPIRY_MARGIN_SECONDS = 300

/** The token endpoint refused or failed; `retryable` is false for answers only the operator can fix. */
export class LinkedInOAuthError extends Error {
  override name = 'LinkedInOAuthError'
  readonly status: number | null
  readonly retryable: boolean
  constructor(message: string, details: { status: number | null, retryable: boolean }, options?: ErrorOptions) {
    super(message, options)
    this.status = details.status
    this.retryable = details.retryable
  }
}

type AuthOptions = Pick<LinkedInOptions, 'accessToken' | 'clientId' | 'clientSecret' | 'refreshToken' | 'oauthUrl'>
type RefreshOptions = AuthOptions & { clientId: string, clientSecret: string, refreshToken: string }

/** The bearer header for the Conversions API: the static token, or a cached or freshly refreshed one. */
export async function authorizeLinkedIn(options: AuthOptions, ctx: AuthContext): Promise<Record<string, string>> {
  if (options.accessToken) return { Authorization: `Bearer ${options.accessToken}` }
  const { clientId, clientSecret, refreshToken } = options
  if (!clientId || !clientSecret || !refreshToken) {
    throw new LinkedInOAuthError('LinkedIn needs accessToken, or refreshToken with clientId and clientSecret', { status: null, retryable: false })
  }
  return { Authorization: `Bearer ${await resolveAccessToken({ ...options, clientId, clientSecret, refreshToken }, ctx)}` }
}

export async function resolveAccessToken(options: RefreshOptions, ctx: AuthContext): Promise<string> {
  const key = tokenCacheKey(options)
  const cached = await ctx.cache.get(key)
  if (cached) return cached
  const { accessToken, expiresIn } = await exchangeRefreshToken(options, ctx)
  const ttl = expiresIn - EXPIRY_MARGIN_SECONDS
  if (ttl > 0) await ctx.cache.set(key, accessToken, ttl)
  return accessToken
}

/** Keyed by a hash, never the secret itself: the cache may be a shared Redis. */
export function tokenCacheKey(options: { clientId: string, refreshToken: string }): string {
  const digest = createHash('sha256').update(`${options.clientId}\n${options.refreshToken}`).digest('hex')
  return `linkedin:access_token:${digest.slice(0, 32)}`
}

async function exchangeRefreshToken(options: RefreshOptions, ctx: AuthContext): Promise<{ accessToken: string, expiresIn: number }> {
  const url = options.oauthUrl ?? 'https://www.linkedin.com/oauth/v2/accessToken'
  const form = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    client_id: options.clientId,
    client_secret: options.clientSecret,
  })
  let response: Response
  try {
    response = await ctx.fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Accept': 'application/json' },
      body: form.toString(),
      signal: ctx.signal,
    })
  }
  catch (error) {
    throw new LinkedInOAuthError(`LinkedIn token request to ${url} failed: ${error instanceof Error ? error.message : String(error)}`, { status: null, retryable: true }, { cause: error })
  }
  const text = await response.text().catch(() => '')
  const body = parseJsonObject(text)
  if (response.ok && typeof body?.access_token === 'string' && body.access_token) {
    // A token without rw_conversions would fail every upload with 403; say so once, here.
    if (typeof body.scope === 'string' && body.scope && !body.scope.split(/[\s,]+/).includes('rw_conversions')) {
      throw new LinkedInOAuthError(`LinkedIn issued an access token without the rw_conversions scope (scopes: ${body.scope}); have the member authorize your app again with rw_conversions and set the new refreshToken`, { status: response.status, retryable: false })
    }
    const expiresIn = Number(body.expires_in)
    return { accessToken: body.access_token, expiresIn: Number.isFinite(expiresIn) ? expiresIn : 0 }
  }
  throw toOAuthError(response.status, body, text)
}

/** `{"error":"invalid_request","error_description":"The provided authorization grant or refresh token is invalid, expired or revoked"}` → what to do. */
function toOAuthError(status: number, body: Record<string, unknown> | undefined, text: string): LinkedInOAuthError {
  const retryable = status >= 500 || status === 429 || status === 408
  if (typeof body?.error === 'string') {
    const description = typeof body.error_description === 'string' ? body.error_description : ''
    const hint = hintFor(body.error, description)
    return new LinkedInOAuthError(`LinkedIn OAuth refused the refresh token with ${body.error}${description ? `: ${description}` : ''}${hint ? ` (${hint})` : ''}`, { status, retryable })
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200)
  return new LinkedInOAuthError(`LinkedIn OAuth answered HTTP ${status} without an access token${snippet ? `: ${snippet}` : ''}`, { status, retryable })
}

function hintFor(error: string, description: string): string | undefined {
  if (/refresh token/i.test(description)) {
    return 'refresh tokens last 365 days from the member\'s authorization: have the member authorize your app again and set the new refreshToken, or use accessToken'
  }
  if (error === 'invalid_client') return 'check clientId and clientSecret in the LinkedIn Developer Portal → your app → Auth'
  if (error === 'unauthorized_client') return 'programmatic refresh tokens are only issued to approved Marketing Developer Platform apps; use accessToken instead'
  return undefined
}

/**
 * OAuth2 for the Google Ads API: a long-lived refresh token is exchanged for an access token (about an hour),
 * which is cached so one exchange serves every upload until shortly before it expires.
 */
import { createHash } from 'node:crypto'
import type { AuthContext } from '../../../core/registry.ts'
import { parseJsonObject } from '../../shared/helpers.ts'
import type { GoogleAdsOptions } from './index.ts'

/** Renew this long before Google's expiry, so a token is never sent in its last minute. */
const EXPIRY_MARGIN_SECONDS = 60

/** The token endpoint refused or failed; `retryable` is false for answers that need the operator (invalid_grant…). */
export class GoogleOAuthError extends Error {
  override name = 'GoogleOAuthError'
  readonly status: number | null
  readonly retryable: boolean
  constructor(message: string, details: { status: number | null, retryable: boolean }, options?: ErrorOptions) {
    super(message, options)
    this.status = details.status
    this.retryable = details.retryable
  }
}

type AuthOptions = Pick<GoogleAdsOptions, 'clientId' | 'clientSecret' | 'refreshToken' | 'developerToken' | 'loginCustomerId' | 'oauthUrl'>

/** The headers every Google Ads API call carries: the bearer token, and the developer and manager ids when set. */
export async function authorizeGoogleAds(options: AuthOptions, ctx: AuthContext): Promise<Record<string, string>> {
  const accessToken = await resolveAccessToken(options, ctx)
  return {
    authorization: `Bearer ${accessToken}`,
    ...(options.developerToken ? { 'developer-token': options.developerToken } : {}),
    ...(options.loginCustomerId ? { 'login-customer-id': options.loginCustomerId } : {}),
  }
}

/** A cached access token for these credentials, or a fresh one from the token endpoint. */
export async function resolveAccessToken(options: AuthOptions, ctx: AuthContext): Promise<string> {
  const key = tokenCacheKey(options)
  const cached = await ctx.cache.get(key)
  if (cached) return cached
  const { accessToken, expiresIn } = await exchangeRefreshToken(options, ctx)
  const ttl = expiresIn - EXPIRY_MARGIN_SECONDS
  if (ttl > 0) await ctx.cache.set(key, accessToken, ttl)
  return accessToken
}

/** Keyed by a hash, never the secret itself: the cache may be a shared Redis. */
export function tokenCacheKey(options: Pick<AuthOptions, 'clientId' | 'refreshToken'>): string {
  const digest = createHash('sha256').update(`${options.clientId}\n${options.refreshToken}`).digest('hex')
  return `google_ads:access_token:${digest.slice(0, 32)}`
}

async function exchangeRefreshToken(options: AuthOptions, ctx: AuthContext): Promise<{ accessToken: string, expiresIn: number }> {
  const url = options.oauthUrl ?? 'https://oauth2.googleapis.com/token'
  const form = new URLSearchParams({
    client_id: options.clientId,
    client_secret: options.clientSecret,
    refresh_token: options.refreshToken,
    grant_type: 'refresh_token',
  })
  let response: Response
  try {
    response = await ctx.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: ctx.signal,
    })
  }
  catch (error) {
    throw new GoogleOAuthError(`Google OAuth token request to ${url} failed: ${error instanceof Error ? error.message : String(error)}`, { status: null, retryable: true }, { cause: error })
  }
  const text = await response.text().catch(() => '')
  const body = parseJsonObject(text)
  if (response.ok && typeof body?.access_token === 'string' && body.access_token) {
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in)
    return { accessToken: body.access_token, expiresIn: Number.isFinite(expiresIn) ? expiresIn : 0 }
  }
  throw toOAuthError(response.status, body, text)
}

/** `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}` → a message saying what to do. */
function toOAuthError(status: number, body: Record<string, unknown> | undefined, text: string): GoogleOAuthError {
  const retryable = status >= 500 || status === 429 || status === 408
  if (typeof body?.error === 'string') {
    const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : ''
    const hint = HINTS[body.error] ? ` (${HINTS[body.error]})` : ''
    return new GoogleOAuthError(`Google OAuth refused the refresh token with ${body.error}${description}${hint}`, { status, retryable })
  }
  const snippet = text.replace(/\s+/g, ' ').trim().slice(0, 200)
  return new GoogleOAuthError(`Google OAuth answered HTTP ${status} without an access token${snippet ? `: ${snippet}` : ''}`, { status, retryable })
}

const HINTS: Record<string, string> = {
  invalid_grant: 'generate a new refresh token; one from a Cloud project whose OAuth consent screen is in "Testing" expires after 7 days',
  invalid_client: 'check clientId and clientSecret, and that the refresh token was issued to that client',
  unauthorized_client: 'the refresh token was issued to another OAuth client',
}

/**
 * OAuth 2.0 for the Conversions API. Either a static access token (valid 60 days, renewed by hand), or a programmatic
 * refresh token (valid 365 days) that is exchanged at LinkedIn's token endpoint for an access token, cached so one
 * exchange serves every request until shortly before it expires (adapters/shared/oauth2.ts).
 */
import type { AuthContext } from '../../../core/registry.ts'
import { OAuth2Error, resolveAccessToken, tokenCacheKey as hashedKey } from '../../shared/oauth2.ts'
import type { LinkedInOptions } from './index.ts'

/** The token endpoint refused or failed; `retryable` is false for answers only the operator can fix. */
export class LinkedInOAuthError extends OAuth2Error {
  override name = 'LinkedInOAuthError'
}

type AuthOptions = Pick<LinkedInOptions, 'accessToken' | 'clientId' | 'clientSecret' | 'refreshToken' | 'oauthUrl'>

/** The bearer header for the Conversions API: the static token, or a cached or freshly refreshed one. */
export async function authorizeLinkedIn(options: AuthOptions, ctx: AuthContext): Promise<Record<string, string>> {
  if (options.accessToken) return { Authorization: `Bearer ${options.accessToken}` }
  const { clientId, clientSecret, refreshToken } = options
  if (!clientId || !clientSecret || !refreshToken) {
    throw new LinkedInOAuthError('LinkedIn needs accessToken, or refreshToken with clientId and clientSecret', { status: null, retryable: false })
  }
  const { accessToken } = await resolveAccessToken(
    { tokenUrl: options.oauthUrl ?? 'https://www.linkedin.com/oauth/v2/accessToken', clientId, clientSecret, refreshToken },
    ctx,
    // Renew five minutes before LinkedIn's expiry, so a token is never sent in its last minutes.
    { vendor: 'LinkedIn', cacheKey: tokenCacheKey({ clientId, refreshToken }), marginSeconds: 300, hint, check: requireConversionsScope, errorClass: LinkedInOAuthError },
  )
  return { Authorization: `Bearer ${accessToken}` }
}

export function tokenCacheKey(options: { clientId: string, refreshToken: string }): string {
  return hashedKey('linkedin:access_token', options.clientId, options.refreshToken)
}

/** A token without rw_conversions would fail every upload with 403; say so once, here. */
function requireConversionsScope(body: Record<string, any>, status: number): void {
  if (typeof body.scope === 'string' && body.scope && !body.scope.split(/[\s,]+/).includes('rw_conversions')) {
    throw new LinkedInOAuthError(`LinkedIn issued an access token without the rw_conversions scope (scopes: ${body.scope}); have the member authorize your app again with rw_conversions and set the new refreshToken`, { status, retryable: false })
  }
}

/** `{"error":"invalid_request","error_description":"The provided authorization grant or refresh token is invalid, expired or revoked"}` → what to do. */
function hint(error: string, description: string): string | undefined {
  if (/refresh token/i.test(description)) {
    return 'refresh tokens last 365 days from the member\'s authorization: have the member authorize your app again and set the new refreshToken, or use accessToken'
  }
  if (error === 'invalid_client') return 'check clientId and clientSecret in the LinkedIn Developer Portal → your app → Auth'
  if (error === 'unauthorized_client') return 'programmatic refresh tokens are only issued to approved Marketing Developer Platform apps; use accessToken instead'
  return undefined
}

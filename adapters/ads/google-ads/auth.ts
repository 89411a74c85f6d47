/**
 * OAuth2 for both paths: a long-lived refresh token is exchanged for an access token (about an hour), which is
 * cached so one exchange serves every request until shortly before it expires (adapters/shared/oauth2.ts). The
 * token's scope is fixed when the refresh token is made: https://www.googleapis.com/auth/datamanager for the Data
 * Manager API, https://www.googleapis.com/auth/adwords for click uploads (README "Credentials").
 */
import type { AuthContext } from '../../../core/registry.ts'
import { OAuth2Error, resolveAccessToken, tokenCacheKey as hashedKey } from '../../shared/oauth2.ts'
import type { GoogleAdsOptions } from './index.ts'

/** The token endpoint refused or failed; `retryable` is false for answers that need the operator (invalid_grant…). */
export class GoogleOAuthError extends OAuth2Error {
  override name = 'GoogleOAuthError'
}

type AuthOptions = Pick<GoogleAdsOptions, 'clientId' | 'clientSecret' | 'refreshToken' | 'developerToken' | 'loginCustomerId' | 'oauthUrl'> & { api?: GoogleAdsOptions['api'] }

/**
 * The bearer token. Click uploads also carry the developer token and the manager id as headers when set; the Data
 * Manager API takes no developer token and names the manager in the request body (`loginAccount`).
 */
export async function authorizeGoogleAds(options: AuthOptions, ctx: AuthContext): Promise<Record<string, string>> {
  const { accessToken } = await resolveAccessToken(
    { tokenUrl: options.oauthUrl ?? 'https://oauth2.googleapis.com/token', clientId: options.clientId, clientSecret: options.clientSecret, refreshToken: options.refreshToken },
    ctx,
    // Renew a minute before Google's expiry, so a token is never sent in its last minute.
    { vendor: 'Google', cacheKey: tokenCacheKey(options), marginSeconds: 60, hint: (code) => HINTS[code], errorClass: GoogleOAuthError },
  )
  if (options.api !== 'upload-clicks') return { authorization: `Bearer ${accessToken}` }
  return {
    authorization: `Bearer ${accessToken}`,
    ...(options.developerToken ? { 'developer-token': options.developerToken } : {}),
    ...(options.loginCustomerId ? { 'login-customer-id': options.loginCustomerId } : {}),
  }
}

export function tokenCacheKey(options: Pick<AuthOptions, 'clientId' | 'refreshToken'>): string {
  return hashedKey('google_ads:access_token', options.clientId, options.refreshToken)
}

const HINTS: Record<string, string> = {
  invalid_grant: 'generate a new refresh token; one from a Cloud project whose OAuth consent screen is in "Testing" expires after 7 days',
  invalid_client: 'check clientId and clientSecret, and that the refresh token was issued to that client',
  unauthorized_client: 'the refresh token was issued to another OAuth client',
}

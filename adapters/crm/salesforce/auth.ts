/**
 * OAuth 2.0 refresh-token flow against the login host (login.salesforce.com, test.salesforce.com for sandboxes, or a
 * My Domain), through adapters/shared/oauth2.ts. The answer carries `access_token` and `instance_url` but no lifetime
 * (the org's session timeout, 15 min to 24 h, applies), so a session is cached for SESSION_CACHE_SECONDS and renewed
 * early when a query answers 401 INVALID_SESSION_ID.
 *
 * Refresh-token rotation: each refresh then answers a new refresh_token and invalidates the one sent; sending a
 * rotated-out token again makes Salesforce revoke the current one too. The new token is stored at once
 * (`ctx.credentials`, the poller's crm_poll_state row) under the hash of the configured credentials, and the next
 * refresh sends the stored token, never the configured one again. A changed configuration (a newly pasted token)
 * has another hash, so it is used as given and its own rotations stored from then on.
 */
import type { CrmPollContext } from '../../../core/registry.ts'
import { OAuth2Error, resolveAccessToken, tokenCacheKey } from '../../shared/oauth2.ts'
import { CrmAuthError, CrmPollError } from '../shared/errors.ts'
import { noAnswer, unexpectedAnswer } from '../shared/http.ts'
import type { SalesforceOptions } from './index.ts'

export interface SalesforceSession {
  accessToken: string
  instanceUrl: string
}

export const SESSION_CACHE_SECONDS = 30 * 60

type AuthOptions = Pick<SalesforceOptions, 'clientId' | 'clientSecret' | 'refreshToken' | 'loginUrl'>

/** The cached session for these credentials, or a new one (`renew`: the cached one was refused). */
export async function resolveSession(options: AuthOptions, ctx: CrmPollContext, renew = false): Promise<SalesforceSession> {
  const tokenUrl = `${options.loginUrl}/services/oauth2/token`
  const basis = sessionCacheKey(options)
  const stored = await ctx.credentials?.get(basis) ?? undefined
  try {
    const { accessToken, fields, rotatedRefreshToken } = await resolveAccessToken(
      { tokenUrl, clientId: options.clientId, clientSecret: options.clientSecret, refreshToken: stored ?? options.refreshToken },
      ctx,
      { vendor: 'Salesforce', cacheKey: basis, marginSeconds: 0, fallbackLifetimeSeconds: SESSION_CACHE_SECONDS, keep: { instanceUrl: 'instance_url' }, renew },
    )
    // Stored before anything else can fail: the token just sent no longer works.
    if (rotatedRefreshToken) await ctx.credentials?.set(basis, rotatedRefreshToken)
    return { accessToken, instanceUrl: fields.instanceUrl!.replace(/\/+$/, '') }
  }
  catch (error) {
    throw error instanceof OAuth2Error ? toSessionError(error, ctx, tokenUrl, stored !== undefined) : error
  }
}

export function sessionCacheKey(options: Pick<AuthOptions, 'clientId' | 'refreshToken' | 'loginUrl'>): string {
  return tokenCacheKey('salesforce:session', options.loginUrl, options.clientId, options.refreshToken)
}

/**
 * The token endpoint's refusal as the poll error the scheduler acts on: credentials, a retry, or an abort.
 * `rotated`: the token sent was one Salesforce issued by rotation (stored), not the configured one.
 */
function toSessionError(error: OAuth2Error, ctx: CrmPollContext, tokenUrl: string, rotated: boolean): unknown {
  const { answer, code } = error
  if (!answer) return noAnswer('salesforce', ctx, tokenUrl, error.cause)
  if (code && answer.status >= 400 && answer.status < 500) {
    const description = (answer.json as { error_description?: unknown }).error_description
    const said = `${code}${typeof description === 'string' ? `: ${description}` : ''}`
    const which = rotated && code === 'invalid_grant' ? 'the rotated refresh token dcgate stored' : 'the refresh token'
    const hint = rotated && code === 'invalid_grant' ? ROTATED_HINT : HINTS[code] ?? GENERIC_HINT
    return new CrmAuthError('salesforce', `Salesforce refused ${which} (${said}): ${hint}`, { status: answer.status })
  }
  if (answer.status === 200) return new CrmPollError('salesforce', 'Salesforce answered the token request without access_token and instance_url', { status: 200, retryable: true })
  return unexpectedAnswer('salesforce', answer, 60_000)
}

const ROTATED_HINT = 'it expired, was revoked, or was used elsewhere (Salesforce then revokes the whole chain): authorize the app again and set the new refreshToken; dcgate uses a changed refreshToken as given and stores its rotations from then on'
const GENERIC_HINT = 'check clientId, clientSecret, refreshToken and loginUrl, and authorize the connected app again if needed'
const HINTS: Record<string, string> = {
  invalid_grant: 'the refresh token expired or was revoked (the connected app\'s refresh token policy, a password reset, or the user revoked access): authorize the connected app again and set the new refreshToken; for a sandbox set loginUrl to https://test.salesforce.com',
  invalid_client_id: 'clientId must be the connected app\'s Consumer Key (Setup → App Manager → the app → View → Manage Consumer Details)',
  invalid_client: 'clientSecret must be the connected app\'s Consumer Secret (or leave it out if the app does not require it for the refresh flow)',
  unsupported_grant_type: 'the connected app must allow the refresh_token scope (Selected OAuth Scopes: "Perform requests at any time")',
  inactive_user: 'the user the refresh token belongs to is inactive: authorize the connected app again as an active user',
  inactive_org: 'the org is locked, closed or suspended',
}

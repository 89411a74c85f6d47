/**
 * OAuth 2.0 refresh-token flow against the login host (login.salesforce.com, test.salesforce.com for sandboxes, or a
 * My Domain), through adapters/shared/oauth2.ts. The answer carries `access_token` and `instance_url` but no lifetime
 * (the org's session timeout, 15 min to 24 h, applies), so a session is cached for SESSION_CACHE_SECONDS and renewed
 * early when a query answers 401 INVALID_SESSION_ID. A refresh token Salesforce rotates is not stored yet (issue 18).
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
  try {
    const { accessToken, fields } = await resolveAccessToken(
      { tokenUrl, clientId: options.clientId, clientSecret: options.clientSecret, refreshToken: options.refreshToken },
      ctx,
      { vendor: 'Salesforce', cacheKey: sessionCacheKey(options), marginSeconds: 0, fallbackLifetimeSeconds: SESSION_CACHE_SECONDS, keep: { instanceUrl: 'instance_url' }, renew },
    )
    return { accessToken, instanceUrl: fields.instanceUrl!.replace(/\/+$/, '') }
  }
  catch (error) {
    throw error instanceof OAuth2Error ? toSessionError(error, ctx, tokenUrl) : error
  }
}

export function sessionCacheKey(options: Pick<AuthOptions, 'clientId' | 'refreshToken' | 'loginUrl'>): string {
  return tokenCacheKey('salesforce:session', options.loginUrl, options.clientId, options.refreshToken)
}

/** The token endpoint's refusal as the poll error the scheduler acts on: credentials, a retry, or an abort. */
function toSessionError(error: OAuth2Error, ctx: CrmPollContext, tokenUrl: string): unknown {
  const { answer, code } = error
  if (!answer) return noAnswer('salesforce', ctx, tokenUrl, error.cause)
  if (code && answer.status >= 400 && answer.status < 500) {
    const description = (answer.json as { error_description?: unknown }).error_description
    const said = `${code}${typeof description === 'string' ? `: ${description}` : ''}`
    return new CrmAuthError('salesforce', `Salesforce refused the refresh token (${said}): ${HINTS[code] ?? GENERIC_HINT}`, { status: answer.status })
  }
  if (answer.status === 200) return new CrmPollError('salesforce', 'Salesforce answered the token request without access_token and instance_url', { status: 200, retryable: true })
  return unexpectedAnswer('salesforce', answer, 60_000)
}

const GENERIC_HINT = 'check clientId, clientSecret, refreshToken and loginUrl, and authorize the connected app again if needed'
const HINTS: Record<string, string> = {
  invalid_grant: 'the refresh token expired or was revoked (the connected app\'s refresh token policy, a password reset, or the user revoked access): authorize the connected app again and set the new refreshToken; for a sandbox set loginUrl to https://test.salesforce.com',
  invalid_client_id: 'clientId must be the connected app\'s Consumer Key (Setup → App Manager → the app → View → Manage Consumer Details)',
  invalid_client: 'clientSecret must be the connected app\'s Consumer Secret (or leave it out if the app does not require it for the refresh flow)',
  unsupported_grant_type: 'the connected app must allow the refresh_token scope (Selected OAuth Scopes: "Perform requests at any time")',
  inactive_user: 'the user the refresh token belongs to is inactive: authorize the connected app again as an active user',
  inactive_org: 'the org is locked, closed or suspended',
}

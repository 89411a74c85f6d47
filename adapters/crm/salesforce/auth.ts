/**
 * OAuth 2.0 refresh-token flow against the login host (login.salesforce.com, test.salesforce.com for sandboxes, or a
 * My Domain). The answer carries `access_token` and `instance_url` but no lifetime (the org's session timeout, 15 min
 * to 24 h, applies), so a session is cached for SESSION_CACHE_SECONDS and renewed early when a query answers 401
 * INVALID_SESSION_ID. The cache key is a hash of the credentials, never a secret: the cache may be a shared Redis.
 */
import { createHash } from 'node:crypto'
import { isObject } from '../../shared/helpers.ts'
import type { CrmPollContext } from '../../../core/registry.ts'
import { CrmAuthError, CrmPollError } from '../shared/errors.ts'
import { exchange, unexpectedAnswer } from '../shared/http.ts'
import type { SalesforceOptions } from './index.ts'

export interface SalesforceSession {
  accessToken: string
  instanceUrl: string
}

export const SESSION_CACHE_SECONDS = 30 * 60

type AuthOptions = Pick<SalesforceOptions, 'clientId' | 'clientSecret' | 'refreshToken' | 'loginUrl'>

/** The cached session for these credentials, or a new one (`renew`: the cached one was refused). */
export async function resolveSession(options: AuthOptions, ctx: CrmPollContext, renew = false): Promise<SalesforceSession> {
  const key = sessionCacheKey(options)
  if (!renew) {
    const cached = readSession(await ctx.cache.get(key))
    if (cached) return cached
  }
  const session = await refreshSession(options, ctx)
  await ctx.cache.set(key, JSON.stringify(session), SESSION_CACHE_SECONDS)
  return session
}

export function sessionCacheKey(options: Pick<AuthOptions, 'clientId' | 'refreshToken' | 'loginUrl'>): string {
  const digest = createHash('sha256').update(`${options.loginUrl}\n${options.clientId}\n${options.refreshToken}`).digest('hex')
  return `salesforce:session:${digest.slice(0, 32)}`
}

async function refreshSession(options: AuthOptions, ctx: CrmPollContext): Promise<SalesforceSession> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: options.clientId, refresh_token: options.refreshToken })
  if (options.clientSecret) form.set('client_secret', options.clientSecret)
  const answer = await exchange('salesforce', ctx, `${options.loginUrl}/services/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
  })
  const body = isObject(answer.json) ? answer.json : {}
  if (answer.status === 200 && typeof body.access_token === 'string' && typeof body.instance_url === 'string') {
    return { accessToken: body.access_token, instanceUrl: body.instance_url.replace(/\/+$/, '') }
  }
  if (typeof body.error === 'string' && answer.status >= 400 && answer.status < 500) {
    const said = `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
    throw new CrmAuthError('salesforce', `Salesforce refused the refresh token (${said}): ${HINTS[body.error] ?? GENERIC_HINT}`, { status: answer.status })
  }
  if (answer.status === 200) throw new CrmPollError('salesforce', 'Salesforce answered the token request without access_token and instance_url', { status: 200, retryable: true })
  throw unexpectedAnswer('salesforce', answer, 60_000)
}

function readSession(text: string | null): SalesforceSession | undefined {
  try {
    const value: unknown = text ? JSON.parse(text) : undefined
    return isObject(value) && typeof value.accessToken === 'string' && typeof value.instanceUrl === 'string' ? { accessToken: value.accessToken, instanceUrl: value.instanceUrl } : undefined
  }
  catch {
    return undefined
  }
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

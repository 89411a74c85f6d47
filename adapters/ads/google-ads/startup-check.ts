/**
 * The start-up check (core/delivery/startup-checks.ts): each refresh token the destination uses is exchanged once, and
 * the scopes Google says it granted (the token answer's `scope`) are compared with what the options ask: the Data
 * Manager scope for conversions (and refunds restated there), the adwords scope for the Google Ads API (`upload-clicks`,
 * or refunds retracted through `adjustments`). Each gap is named, with what fails and what to do.
 */
import type { AuthContext } from '../../../core/registry.ts'
import { resolveAccessToken } from '../../shared/oauth2.ts'
import { GoogleOAuthError } from './auth.ts'
import type { GoogleAdsOptions } from './index.ts'
import { refundsThroughAdsApi } from './refunds.ts'

export const SCOPE = { dataManager: 'https://www.googleapis.com/auth/datamanager', adwords: 'https://www.googleapis.com/auth/adwords' } as const

interface Need { token: string, clientId: string, clientSecret: string, scope: string, field: string, fails: string }

export async function checkGoogleCredentials(options: GoogleAdsOptions, ctx: AuthContext): Promise<string[]> {
  const needs: Need[] = []
  const own = { token: options.refreshToken, clientId: options.clientId, clientSecret: options.clientSecret, field: 'refreshToken' }
  if (options.api === 'upload-clicks') needs.push({ ...own, scope: SCOPE.adwords, fails: 'every click upload and refund will be refused' })
  else needs.push({ ...own, scope: SCOPE.dataManager, fails: `every conversion${refundsThroughAdsApi(options) ? '' : ' and refund'} will be refused 403 "Request had insufficient authentication scopes" (README "Credentials")` })
  if (options.adjustments?.refreshToken) {
    needs.push({
      token: options.adjustments.refreshToken, clientId: options.adjustments.clientId ?? options.clientId, clientSecret: options.adjustments.clientSecret ?? options.clientSecret,
      field: 'adjustments.refreshToken', scope: SCOPE.adwords,
      fails: 'refunds through the Google Ads API will be refused until it has that scope; without the adjustments block they are restated through the Data Manager API (README "Refunds")',
    })
  }
  const granted = new Map<string, Promise<string[] | undefined>>()
  const problems = await Promise.all(needs.map(async (need) => {
    const key = `${need.clientId}\n${need.token}`
    if (!granted.has(key)) granted.set(key, grantedScopes(need, options, ctx))
    try {
      const scopes = await granted.get(key)!
      // Google names the scopes in every answer; without them there is nothing to compare.
      if (!scopes || scopes.includes(need.scope)) return undefined
      return `${need.field} was granted ${scopes.join(' ') || 'no scope'}, not ${need.scope}: ${need.fails}`
    }
    catch (error) {
      return `${need.field} could not be exchanged for an access token: ${error instanceof Error ? error.message : String(error)}`
    }
  }))
  return problems.filter((problem): problem is string => problem !== undefined)
}

async function grantedScopes(need: Need, options: GoogleAdsOptions, ctx: AuthContext): Promise<string[] | undefined> {
  let scope: unknown
  await resolveAccessToken(
    { tokenUrl: options.oauthUrl, clientId: need.clientId, clientSecret: need.clientSecret, refreshToken: need.token },
    ctx,
    { vendor: 'Google', cacheKey: 'google_ads:startup-check', marginSeconds: 60, renew: true, errorClass: GoogleOAuthError, check: (body) => void (scope = body.scope) },
  )
  return typeof scope === 'string' ? scope.split(/\s+/).filter(Boolean) : undefined
}

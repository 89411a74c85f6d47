/**
 * Pure mapping of refunds to the Campaign Management API v13's ApplyOnlineConversionAdjustments, REST form:
 * POST {apiUrl}/CampaignManagement/v13/OnlineConversionAdjustments/Apply with `{ OnlineConversionAdjustments: [...] }`.
 * A full refund is a Retract, a partial one a Restate with the value left. Microsoft finds the conversion by the goal's
 * name and the TransactionId the UET event carried (`customData.transactionId`, our order id). Sources: README "Refunds".
 */
import type { AdjustmentEvent, PlatformRequest, StandardEvent } from '../../../core/delivery/types.ts'
import type { AuthContext } from '../../../core/registry.ts'
import { OAuth2Error, resolveAccessToken, tokenCacheKey, type AccessToken } from '../../shared/oauth2.ts'
import type { MicrosoftAdsOptions } from './map.ts'

export const CAMPAIGN_API_URL = 'https://campaign.api.bingads.microsoft.com'
export const MICROSOFT_TOKEN_URL = 'https://login.microsoftonline.com/common/oauth2/v2.0/token'
/** The scope the Bing Ads API checks on every access token; offline_access keeps the refresh token usable. */
export const MSADS_SCOPE = 'https://ads.microsoft.com/msads.manage offline_access'
export const CAMPAIGN_MANAGEMENT_VERSION = 'v13'

/** `destinations.microsoft_ads.adjustments`: the Campaign Management API credentials; every key optional (README "Refunds"). */
export interface MicrosoftAdjustmentOptions {
  clientId?: string
  clientSecret?: string
  refreshToken?: string
  developerToken?: string
  customerId?: string
  accountId?: string
  /** The conversion goal's name per standard event (ConversionName). */
  conversionNames: Partial<Record<StandardEvent, string>>
  apiUrl: string
  oauthUrl: string
}

export interface OnlineConversionAdjustment {
  AdjustmentType: 'Retract' | 'Restate'
  AdjustmentTime: string
  ConversionName: string
  TransactionId: string
  /** Restate only: "should not be set" on a Retract. */
  AdjustmentValue?: number
  AdjustmentCurrencyCode?: string
}

/** The keys a refund needs before any call, in the order the README lists them. */
const REQUIRED = ['clientId', 'refreshToken', 'developerToken', 'customerId', 'accountId'] as const

export function toOnlineAdjustmentsRequest(items: readonly AdjustmentEvent[], options: MicrosoftAdsOptions): PlatformRequest {
  const settings = options.adjustments
  // adjustmentSkipReason keeps such refunds from the worker; this says why to anyone else building the request (the dashboard).
  if (!settings || REQUIRED.some((key) => !settings[key])) throw new Error('the adjustments options are incomplete (README "Refunds")')
  return {
    url: `${settings.apiUrl}/CampaignManagement/${CAMPAIGN_MANAGEMENT_VERSION}/OnlineConversionAdjustments/Apply`,
    method: 'POST',
    // AuthenticationToken comes from authorizeAdjustments; the rest are the REST form's headers.
    headers: { 'Content-Type': 'application/json', 'DeveloperToken': settings.developerToken!, 'CustomerId': settings.customerId!, 'CustomerAccountId': settings.accountId! },
    body: JSON.stringify({ OnlineConversionAdjustments: items.map((item) => toOnlineAdjustment(item, settings)) }),
  }
}

export function toOnlineAdjustment({ conversion, adjustment }: AdjustmentEvent, settings: MicrosoftAdjustmentOptions): OnlineConversionAdjustment {
  // "Cannot be earlier than the original conversion date and time": a refund stamped before the sale (clock skew
  // between a shop and its payment provider) moves to one second after it.
  const at = Math.max(adjustment.at.getTime(), Math.floor(conversion.occurredAt.getTime() / 1000) * 1000 + 1000)
  const restate = adjustment.type === 'restatement' && adjustment.value !== undefined
  return {
    AdjustmentType: restate ? 'Restate' : 'Retract',
    AdjustmentTime: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ConversionName: settings.conversionNames[conversion.standardEvent]!,
    TransactionId: conversion.orderId!,
    ...(restate ? { AdjustmentValue: adjustment.value, ...(adjustment.currency ? { AdjustmentCurrencyCode: adjustment.currency } : {}) } : {}),
  }
}

/** Why this refund cannot be told: options missing, no goal name for the event, no transaction id to find it by. */
export function adjustmentSkipReason({ conversion, adjustment }: AdjustmentEvent, options: MicrosoftAdsOptions): string | undefined {
  const settings = options.adjustments
  const missing = REQUIRED.filter((key) => !settings?.[key]).map((key) => `adjustments.${key}`)
  if (!settings?.conversionNames[conversion.standardEvent]) missing.push(`adjustments.conversionNames.${conversion.standardEvent}`)
  if (missing.length > 0) {
    return `refund not sent: Microsoft Advertising takes refunds through the Campaign Management API, which needs ${missing.join(', ')} (README "Refunds")`
  }
  if (!conversion.orderId) return 'refund not sent: the conversion reached Microsoft without a transaction id (no order id), so Microsoft cannot find it to adjust'
  if (adjustment.type === 'restatement' && adjustment.value === undefined) return 'a partial refund of a conversion without a value cannot be restated'
  return undefined
}

/**
 * The Microsoft identity platform's access token, as the AuthenticationToken header; cached until a minute before expiry.
 *
 * Rotation (README "Refresh tokens"): each refresh answers a new refresh token and leaves the old one valid, while a
 * token lives 90 days. The newest one is kept in `ctx.credentials` (platform_credentials) under a hash of the configured
 * credentials and sent on the next refresh, so the chain never ages out; a newly pasted token has another hash and
 * starts fresh. A stored token refused with invalid_grant gives way to the configured one, tried once.
 */
export async function authorizeAdjustments(options: MicrosoftAdsOptions, ctx: AuthContext): Promise<Record<string, string>> {
  const settings = options.adjustments
  if (!settings?.clientId || !settings.refreshToken) throw new MicrosoftOAuthError('adjustments.clientId and adjustments.refreshToken are required', { status: null, retryable: false })
  const { clientId, refreshToken: configured } = settings
  const basis = tokenCacheKey('microsoft_ads:refresh_token', clientId, configured)
  const stored = await ctx.credentials?.get(basis) ?? undefined
  const refresh = (refreshToken: string) => resolveAccessToken(
    { tokenUrl: settings.oauthUrl, clientId, clientSecret: settings.clientSecret, refreshToken, scope: MSADS_SCOPE },
    ctx,
    { vendor: 'Microsoft', cacheKey: tokenCacheKey('microsoft_ads:access_token', clientId, configured), marginSeconds: 60, hint: (code) => HINTS[code], errorClass: MicrosoftOAuthError },
  )
  let token: AccessToken
  try {
    token = await refresh(stored ?? configured)
  }
  catch (error) {
    const storedRefused = stored !== undefined && stored !== configured && error instanceof OAuth2Error && error.code === 'invalid_grant'
    if (!storedRefused) throw error
    token = await refresh(configured)
  }
  if (token.rotatedRefreshToken) await ctx.credentials?.set(basis, token.rotatedRefreshToken)
  return { AuthenticationToken: token.accessToken }
}

export class MicrosoftOAuthError extends OAuth2Error {
  override name = 'MicrosoftOAuthError'
}

const HINTS: Record<string, string> = {
  invalid_grant: 'the refresh token expired (90 days, and dcgate refreshed none for that long) or was revoked (a password change, the user withdrew consent): sign in again with the msads.manage scope and paste the new refresh token into adjustments.refreshToken; dcgate starts from a newly pasted token and keeps its rotations',
  invalid_client: 'check adjustments.clientId and adjustments.clientSecret (a web app registration needs the secret, a native one none)',
  unauthorized_client: 'the refresh token was issued to another application (client) id',
}

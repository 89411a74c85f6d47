import * as v from 'valibot'
import { strictOptions } from '../../../core/options.ts'
import { defineAdPlatform } from '../../../core/registry.ts'
import { perStandardEvent } from '../../shared/options.ts'
import { authorizeGoogleAds } from './auth.ts'
import { skipReason, toUploadRequest } from './map.ts'
import { parseUploadResponse } from './response.ts'
import { GOOGLE_ADS_API_VERSION } from './version.ts'

/** Config files may hold ids as numbers or as "123-456-7890"; we keep digits only, as text. */
function digits(what: string, length?: number) {
  return v.pipe(
    v.union([v.string(), v.pipe(v.number(), v.safeInteger())], `must be ${what}`),
    v.transform((raw) => String(raw).trim().replace(/-/g, '')),
    length
      ? v.regex(new RegExp(`^\\d{${length}}$`), `must be ${what} (${length} digits; dashes are allowed)`)
      : v.regex(/^\d{1,19}$/, `must be ${what} (digits only)`),
  )
}
const customerId = (what: string) => digits(what, 10)
const actionId = v.optional(digits('a conversion action id, the number after "ctId=" in the action\'s URL or from conversion_action.id'))
const secret = (what: string) => v.pipe(v.string(`must be ${what}`), v.trim(), v.nonEmpty(`must be ${what}`))
const url = (what: string) => v.pipe(v.string(), v.trim(), v.url(`must be ${what}`), v.transform((u) => u.replace(/\/+$/, '')))

/** `sites[].destinations.google_ads`; unknown keys are refused so a misspelt `validateonly` stops boot. */
export const googleAdsOptions = strictOptions({
  /** The Google Ads account that owns the conversion actions (the "conversion customer"). */
  customerId: customerId('the Google Ads customer id of the account that owns the conversion actions'),
  /**
   * Optional since Google sunset developer tokens on 2026-09-09 (access now belongs to the OAuth client's Cloud
   * project and the header is ignored). Sent when set, so configurations from before the sunset keep working.
   */
  developerToken: v.optional(secret('the developer token from the Google Ads API Center')),
  clientId: secret('the OAuth client id'),
  clientSecret: secret('the OAuth client secret'),
  refreshToken: secret('an OAuth refresh token with the https://www.googleapis.com/auth/adwords scope'),
  /** The manager (MCC) account the refresh token's user signs in through, when customerId is reached via one. */
  loginCustomerId: v.optional(customerId('the manager account\'s customer id')),
  /** One UPLOAD_CLICKS conversion action per standard event; events without one are skipped (see skipReason). */
  conversionActions: v.pipe(
    perStandardEvent(actionId, 'conversion action ids'),
    v.check((actions) => Object.values(actions).some(Boolean), 'must give at least one conversion action id'),
  ),
  /** Test mode: Google validates every conversion and records none. */
  validateOnly: v.optional(v.boolean('must be true or false'), false),
  baseUrl: v.optional(url('an http(s) URL'), 'https://googleads.googleapis.com'),
  oauthUrl: v.optional(url('an http(s) URL'), 'https://oauth2.googleapis.com/token'),
}, 'customerId, clientId, clientSecret, refreshToken and conversionActions')

export type GoogleAdsOptions = v.InferOutput<typeof googleAdsOptions>

export default defineAdPlatform<GoogleAdsOptions>({
  name: 'google_ads',
  apiVersion: GOOGLE_ADS_API_VERSION,
  options: googleAdsOptions,
  // ConversionUploadService takes at most 2,000 conversions a request (TOO_MANY_CONVERSIONS_IN_REQUEST beyond).
  maxBatchSize: 2000,
  // The longest click-through conversion window an action can have; Google refuses older clicks with EXPIRED_EVENT.
  maxEventAgeDays: 90,
  skipReason,
  authorize: authorizeGoogleAds,
  toRequest: toUploadRequest,
  parseResponse: parseUploadResponse,
})

import * as v from 'valibot'
import { strictOptions } from '../../../core/options.ts'
import { defineAdPlatform } from '../../../core/registry.ts'
import { perStandardEvent } from '../../shared/options.ts'
import { authorizeGoogleAds } from './auth.ts'
import { skipReason, toIngestRequest } from './map.ts'
import { toUploadRequest } from './map-upload-clicks.ts'
import { googleDiagnostics } from './diagnostics.ts'
import { checkGoogleCredentials } from './startup-check.ts'
import { parseGoogleAdsResponse } from './response.ts'
import { authorizeRefunds, parseRefundResponse, refundSkipReason, toRefundRequest } from './refunds.ts'
import { googleConnectionTest, googleTestEvents } from './testing.ts'
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

/** Which Google API receives the conversions. Configurations without `api` use the Data Manager API. */
export const GOOGLE_ADS_APIS = ['data-manager', 'upload-clicks'] as const
export type GoogleAdsApi = typeof GOOGLE_ADS_APIS[number]
/** The host each API is called on, unless `baseUrl` names a proxy or a fake. */
export const DEFAULT_BASE_URL: Record<GoogleAdsApi, string> = {
  'data-manager': 'https://datamanager.googleapis.com',
  'upload-clicks': 'https://googleads.googleapis.com',
}

const ADWORDS_TOKEN = 'a refresh token made with the https://www.googleapis.com/auth/adwords scope (it may be the destination\'s own when that was made with both scopes)'

/**
 * The Google Ads API's credentials, for refunds through UploadConversionAdjustments (README "Refunds"). Given, refunds
 * are retracted or restated there instead of restated through the Data Manager API. Checked at boot: a block without
 * its refresh token stops the start and says what is missing.
 */
const adjustmentsOptions = strictOptions({
  refreshToken: v.optional(secret(ADWORDS_TOKEN)),
  /** Default: the destination's OAuth client. */
  clientId: v.optional(secret('the OAuth client id')),
  clientSecret: v.optional(secret('the OAuth client secret')),
}, 'refreshToken')

/** `sites[].destinations.google_ads`; unknown keys are refused so a misspelt `validateonly` stops boot. */
export const googleAdsOptions = v.pipe(
  strictOptions({
    /**
     * `data-manager` (default): the Data Manager API's events:ingest. `upload-clicks`: the Google Ads API's
     * UploadClickConversions, which Google refuses to new adopters since 2026-06-15 (README).
     */
    api: v.optional(v.picklist(GOOGLE_ADS_APIS, 'must be "data-manager" or "upload-clicks"'), 'data-manager'),
    /** The Google Ads account that owns the conversion actions (the "conversion customer"). */
    customerId: customerId('the Google Ads customer id of the account that owns the conversion actions'),
    /**
     * Legacy path only, and optional since Google sunset developer tokens on 2026-09-09 (the header is ignored).
     * The Data Manager API takes none; a configuration that still has one keeps booting.
     */
    developerToken: v.optional(secret('the developer token from the Google Ads API Center')),
    clientId: secret('the OAuth client id'),
    clientSecret: secret('the OAuth client secret'),
    refreshToken: secret('an OAuth refresh token with the https://www.googleapis.com/auth/datamanager scope (https://www.googleapis.com/auth/adwords for api "upload-clicks")'),
    /** The manager (MCC) account the refresh token's user signs in through, when customerId is reached via one. */
    loginCustomerId: v.optional(customerId('the manager account\'s customer id')),
    /** One conversion action per standard event; events without one are skipped (see skipReason). */
    conversionActions: v.pipe(
      perStandardEvent(actionId, 'conversion action ids'),
      v.check((actions) => Object.values(actions).some(Boolean), 'must give at least one conversion action id'),
    ),
    /** Test mode: Google validates every request and records nothing. */
    validateOnly: v.optional(v.boolean('must be true or false'), false),
    /** The host the adapter posts to; default per api (DEFAULT_BASE_URL). */
    baseUrl: v.optional(url('an http(s) URL')),
    oauthUrl: v.optional(url('an http(s) URL'), 'https://oauth2.googleapis.com/token'),
    /** Refunds through the Google Ads API (retractions); absent, refunds are restated through the Data Manager API. */
    adjustments: v.optional(adjustmentsOptions),
  }, 'customerId, clientId, clientSecret, refreshToken and conversionActions'),
  v.forward(
    v.check((options) => !options.adjustments || options.adjustments.refreshToken !== undefined, `is missing: refunds through the Google Ads API need ${ADWORDS_TOKEN}; without the adjustments block they are restated through the Data Manager API`),
    ['adjustments', 'refreshToken'],
  ),
  v.transform((options) => ({ ...options, baseUrl: options.baseUrl ?? DEFAULT_BASE_URL[options.api] })),
)

export type GoogleAdsOptions = v.InferOutput<typeof googleAdsOptions>

export default defineAdPlatform<GoogleAdsOptions>({
  name: 'google_ads',
  label: 'Google Ads',
  apiVersion: GOOGLE_ADS_API_VERSION,
  options: googleAdsOptions,
  // IngestEventsRequest takes at most 2,000 events (Data Manager "Limits and quotas"); so does UploadClickConversions.
  maxBatchSize: 2000,
  // 300 requests a minute per Google Cloud project (Data Manager "Limits and quotas"); the project is the OAuth client's.
  maxRequestsPerSecond: 5,
  // The longest click-through conversion window an action can have; Google refuses older clicks.
  maxEventAgeDays: 90,
  // AddressInfo's postal code goes in clear; the region is the conversion's country (map.ts addressOf).
  clearTraits: ['postalCode', 'countryCode'],
  skipReason,
  authorize: authorizeGoogleAds,
  // Names a refresh token without the scope its API needs, once at start (startup-check.ts).
  startupCheck: checkGoogleCredentials,
  toRequest: (events, options) => options.api === 'upload-clicks' ? toUploadRequest(events, options) : toIngestRequest(events, options),
  parseResponse: parseGoogleAdsResponse,
  // Google processes events after answering {requestId}; requestStatus:retrieve tells later how it went (diagnostics.ts).
  diagnostics: googleDiagnostics,
  connectionTest: googleConnectionTest,
  testEvents: googleTestEvents,
  // Refunds: restated through the Data Manager API's events:ingest by default, through the Google Ads API's
  // UploadConversionAdjustments where its credentials are configured (refunds.ts, README "Refunds").
  adjustments: {
    // 2,000 events per IngestEventsRequest; UploadConversionAdjustments takes 2,000 too (TOO_MANY_ADJUSTMENTS_IN_REQUEST).
    maxBatchSize: 2000,
    // Restatements count against the project's 300 requests a minute with the conversions: a small share of it
    // (a 429 when both peak at once is retried after Google's delay).
    maxRequestsPerSecond: 1,
    // Google takes events within the longest click-through window; the Google Ads API's 54 days is in refundSkipReason.
    maxConversionAgeDays: 90,
    authorize: authorizeRefunds,
    skipReason: refundSkipReason,
    toRequest: toRefundRequest,
    parseResponse: parseRefundResponse,
  },
})

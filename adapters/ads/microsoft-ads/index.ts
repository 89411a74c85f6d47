import * as v from 'valibot'
import type { StandardEvent } from '../../../core/delivery/types.ts'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { DEFAULT_EVENTS, UET_CAPI_URL, skipReason, toUetRequest, type MicrosoftAdsOptions, type UetGoalEvent } from './map.ts'
import { fromUetResponse } from './response.ts'
import { CAMPAIGN_API_URL, MICROSOFT_TOKEN_URL, adjustmentSkipReason, authorizeAdjustments, toOnlineAdjustmentsRequest, type MicrosoftAdjustmentOptions } from './map-adjustments.ts'
import { parseOnlineAdjustmentsResponse } from './response-adjustments.ts'
import { MICROSOFT_ADS_API_VERSION } from './version.ts'

const text = (what: string) => v.pipe(v.string(`must be ${what}`), v.trim(), v.nonEmpty(`must be ${what}`))

/** A goal event: the action as a string, the full object, or false to keep this standard event away from Microsoft. */
const goalEvent = v.union(
  [
    v.pipe(text('the goal\'s event action'), v.transform((eventName): UetGoalEvent => ({ eventName }))),
    v.strictObject({
      eventName: text('the goal\'s event action (Action equals …)'),
      eventCategory: v.optional(text('the goal\'s event category')),
      eventLabel: v.optional(text('the goal\'s event label')),
    }),
    v.literal(false),
  ],
  'must be the event action of a Microsoft Advertising goal ("purchase"), { eventName, eventCategory?, eventLabel? }, or false to not send this event',
)

/** Per standard event; the ones not given keep their default (README "Event mapping"). */
const events = v.pipe(
  perStandardEvent(v.optional(goalEvent), 'goal event actions'),
  v.transform((given): Record<StandardEvent, UetGoalEvent | false> => {
    const chosen = Object.fromEntries(Object.entries(given).filter(([, goal]) => goal !== undefined))
    return { ...DEFAULT_EVENTS, ...chosen }
  }),
)

const digits = (what: string) => v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.safeInteger())], `must be ${what}`),
  v.transform((raw) => String(raw).trim()),
  v.regex(/^\d{1,20}$/, `must be ${what} (digits only)`),
)

/**
 * Refunds through the Campaign Management API (README "Refunds"). Every key may be left out: a refund then says which
 * ones it needs, so a site that sends conversions only keeps booting.
 */
const adjustments = strictOptions(
  {
    clientId: v.optional(text('the application (client) id of the app registration')),
    clientSecret: v.optional(text('the app registration\'s client secret')),
    refreshToken: v.optional(text('a refresh token granted the https://ads.microsoft.com/msads.manage scope')),
    developerToken: v.optional(text('the developer token from the Microsoft Advertising Developer Portal')),
    customerId: v.optional(digits('the customer (manager account) id')),
    accountId: v.optional(digits('the ad account id')),
    conversionNames: v.optional(perStandardEvent(v.optional(text('the conversion goal\'s name')), 'conversion goal names'), {}),
    apiUrl: v.optional(httpUrl(CAMPAIGN_API_URL), CAMPAIGN_API_URL),
    oauthUrl: v.optional(httpUrl(MICROSOFT_TOKEN_URL), MICROSOFT_TOKEN_URL),
  },
  'clientId, refreshToken, developerToken, customerId, accountId and conversionNames',
) satisfies v.GenericSchema<unknown, MicrosoftAdjustmentOptions>

/** `sites[].destinations.microsoft_ads`; unknown keys are refused so a misspelt option stops boot. */
export const microsoftAdsOptions = strictOptions(
  {
    tagId: v.pipe(
      v.union([v.string(), v.pipe(v.number(), v.safeInteger())], 'must be the UET tag id (digits), from Tools → UET tag'),
      v.transform((raw) => String(raw).trim()),
      v.regex(/^\d{1,20}$/, 'must be the UET tag id (digits only), from Tools → UET tag'),
    ),
    apiToken: text('the UET tag\'s Conversions API token (edit the tag → Use Conversions API)'),
    events: v.optional(events, {}),
    baseUrl: v.optional(httpUrl(UET_CAPI_URL), UET_CAPI_URL),
    adjustments: v.optional(adjustments),
  },
  'tagId and apiToken', 'unknown key (check its spelling; the UET Conversions API has no test mode, see the README)',
) satisfies v.GenericSchema<unknown, MicrosoftAdsOptions>

/** Microsoft Advertising UET Conversions API (server events for a UET tag). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<MicrosoftAdsOptions>({
  name: 'microsoft_ads',
  label: 'Microsoft Advertising',
  apiVersion: MICROSOFT_ADS_API_VERSION,
  options: microsoftAdsOptions,
  // "The maximum number of events per batch upload is 1,000."
  maxBatchSize: 1000,
  // The guide publishes no request rate: a safe cap (README "Batches and rate"); a 429 is retried after Retry-After.
  maxRequestsPerSecond: 10,
  // No maxEventAgeDays: the UET Conversions API guide documents no age limit for eventTime (README "Event age").
  skipReason,
  toRequest: toUetRequest,
  parseResponse: fromUetResponse,
  // Refunds: the Campaign Management API's ApplyOnlineConversionAdjustments, by the transaction id (README "Refunds").
  adjustments: {
    // The operation names no limit ("N/A"); ApplyOfflineConversionAdjustments takes 1,000, used here too.
    maxBatchSize: 1000,
    // Campaign Management's documented call limit is per minute (CallRateExceeded, code 117); a small share of it.
    maxRequestsPerSecond: 2,
    // Not documented for online adjustments; offline conversions are taken up to 90 days old.
    maxConversionAgeDays: 90,
    authorize: authorizeAdjustments,
    skipReason: adjustmentSkipReason,
    toRequest: toOnlineAdjustmentsRequest,
    parseResponse: parseOnlineAdjustmentsResponse,
  },
  testEventsGap: 'the UET Conversions API has no test mode, and every accepted event counts (README "Test mode": a separate UET tag)',
  connectionTestGap: 'The UET Conversions API documents no read-only call for a tag\'s token.',
})

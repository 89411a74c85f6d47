import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { PINTEREST_EVENT_NAMES, skipReason, toPinterestRequest, type PinterestOptions } from './map.ts'
import { fromPinterestResponse } from './response.ts'
import { PINTEREST_API_VERSION } from './version.ts'

const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))

const eventName = v.optional(v.union(
  [v.picklist(PINTEREST_EVENT_NAMES), v.literal(false)],
  `must be one of Pinterest's event names (${PINTEREST_EVENT_NAMES.join(', ')}), or false to not send it`,
))

/** `sites[].destinations.pinterest`; unknown keys are refused so a misspelt `testmode` stops boot. */
const options = strictOptions(
  {
    adAccountId: v.pipe(
      v.string('must be a string of digits (quote it: numbers this long lose digits)'),
      v.trim(),
      v.regex(/^\d{1,18}$/, 'must be the ad account id from Ads Manager, digits only (at most 18)'),
    ),
    accessToken: NonEmpty,
    testMode: v.optional(v.boolean('must be true or false')),
    eventNames: v.optional(perStandardEvent(eventName, 'Pinterest event names')),
    baseUrl: v.optional(httpUrl('https://api.pinterest.com')),
  },
  'adAccountId and accessToken',
) satisfies v.GenericSchema<unknown, PinterestOptions>

/** Pinterest Conversions API (v5 `events/create`). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<PinterestOptions>({
  name: 'pinterest',
  label: 'Pinterest',
  apiVersion: PINTEREST_API_VERSION,
  options,
  // ConversionEvents.data has maxItems 1000.
  maxBatchSize: 1000,
  // events/create: 5,000 calls a minute per ad account, so 83 a second (83 × 60 = 4,980).
  maxRequestsPerSecond: 83,
  // Pinterest refuses events more than 7 days old ("Given timestamp is in the past"); see README.
  maxEventAgeDays: 7,
  skipReason,
  toRequest: toPinterestRequest,
  parseResponse: fromPinterestResponse,
  // Test mode: `?test=true`, validated and not recorded (README "Test mode").
  testEvents: { options: (options) => ({ ...options, testMode: true }) },
  connectionTestGap: 'A conversion access token is made for the events endpoint; Send test event (test=true) checks it without recording anything.',
})

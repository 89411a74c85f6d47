import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { authorizeX } from './auth.ts'
import { X_ADS_API_URL, skipReason, toXRequest, type XOptions } from './map.ts'
import { fromXResponse } from './response.ts'
import { X_ADS_API_VERSION } from './version.ts'

const secret = (what: string) => v.pipe(v.string(`must be ${what}`), v.trim(), v.nonEmpty(`must be ${what}`))

/** X ids are base36: `o8z6j`. An event id may also be written `tw-<pixel id>-<event id>`. */
const EVENT_ID = /^(?:tw-([a-z0-9]+)-)?[a-z0-9]+$/
const eventId = (what: string) => v.pipe(
  v.string(`must be ${what}`),
  v.trim(),
  v.regex(EVENT_ID, `must be ${what}: the event's ID from Events Manager, such as o87ne or tw-o8z6j-o87ne`),
)
const mappedEvent = v.optional(eventId('an X event id'))

const events = v.pipe(
  perStandardEvent(mappedEvent, 'X event ids'),
  v.check((ids) => Object.values(ids).some(Boolean), 'must give at least one X event id'),
)

/** `sites[].destinations.x`; unknown keys are refused so a misspelt `testEventID` stops boot. */
const options = v.pipe(
  strictOptions(
    {
      consumerKey: secret('the X app\'s API key (consumer key)'),
      consumerSecret: secret('the X app\'s API key secret (consumer secret)'),
      accessToken: secret('a user access token of a handle with AD_MANAGER or ACCOUNT_ADMIN on the ad account'),
      accessTokenSecret: secret('the access token secret'),
      pixelId: v.pipe(
        v.string('must be the pixel id from Events Manager'),
        v.trim(),
        v.regex(/^[a-z0-9]+$/, 'must be the pixel id from Events Manager, such as o8z6j (lower-case letters and digits)'),
      ),
      events,
      testEventId: v.optional(eventId('an X event id kept for tests')),
      baseUrl: v.optional(httpUrl('https://ads-api.x.com'), X_ADS_API_URL),
    },
    'consumerKey, consumerSecret, accessToken, accessTokenSecret, pixelId and events',
  ),
  // X refuses an event of another pixel; catch a `tw-<pixel>-<event>` id copied from the wrong pixel at boot.
  v.check(
    (input) => [...Object.values(input.events), input.testEventId].every((id) => !id || (EVENT_ID.exec(id)?.[1] ?? input.pixelId) === input.pixelId),
    'an event id written tw-<pixel>-<event> names another pixel than pixelId',
  ),
) satisfies v.GenericSchema<unknown, XOptions>

/** X (Twitter) Conversions API, OAuth 1.0a user context. Setup, mapping and decisions: README.md. */
export default defineAdPlatform<XOptions>({
  name: 'x',
  label: 'X',
  apiVersion: X_ADS_API_VERSION,
  options,
  // "Up to 500 conversion events may be provided"; more is refused with "Conversion count limit is 500".
  maxBatchSize: 500,
  // X allows 100,000 requests and 60,000 events per account per 15 minutes: 60 one-event requests a second stay under
  // both (README "Batch cap, window, rate limits"); fuller batches that cross the event limit get a 429 with its reset.
  maxRequestsPerSecond: 60,
  // X documents no age limit; 90 days is the longest post-engagement attribution window it offers (README).
  maxEventAgeDays: 90,
  skipReason,
  authorize: authorizeX,
  toRequest: toXRequest,
  parseResponse: fromXResponse,
  testEventsGap: 'X has no test flag or test-events endpoint: every accepted event is recorded (README "Test mode": testEventId)',
  connectionTestGap: 'The conversion endpoint is the only X Ads API call the destination\'s options name; reading the account needs its account id, which they do not hold.',
})

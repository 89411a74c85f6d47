import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { CUSTOM_EVENT_NAME_MAX, TRACKING_TYPES } from './events.ts'
import { skipReason, toRedditRequest, type RedditOptions } from './map.ts'
import { fromRedditResponse } from './response.ts'
import { codedTestMode } from '../../shared/test-code.ts'
import { REDDIT_API_VERSION } from './version.ts'

const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))

const customEvent = v.strictObject(
  { custom: v.pipe(NonEmpty, v.maxLength(CUSTOM_EVENT_NAME_MAX, `must be at most ${CUSTOM_EVENT_NAME_MAX} characters (Reddit's limit for custom event names)`)) },
  (issue) => (issue.expected === 'never' ? 'unknown key; a custom event is written { custom: "Event name" }' : 'is required'),
)
const redditEvent = v.union(
  [v.picklist(TRACKING_TYPES), customEvent, v.literal(false)],
  `must be a Reddit standard event (${TRACKING_TYPES.join(', ')}), { custom: "Event name" }, or false to not send it`,
)

/** `sites[].destinations.reddit`; unknown keys are refused so a misspelt `testid` stops boot. */
const options = strictOptions(
  {
    pixelId: v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.regex(/^\w{1,64}$/, 'must be the pixel id from Events Manager, e.g. a2_abcd1234 (letters, digits and _)'),
    ),
    accessToken: NonEmpty,
    testId: v.optional(NonEmpty),
    events: v.optional(perStandardEvent(v.optional(redditEvent), 'Reddit events')),
    baseUrl: v.optional(httpUrl('https://ads-api.reddit.com')),
  },
  'pixelId and accessToken',
) satisfies v.GenericSchema<unknown, RedditOptions>

/** Reddit Conversions API v3 (server events for a Reddit pixel). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<RedditOptions>({
  name: 'reddit',
  label: 'Reddit',
  apiVersion: REDDIT_API_VERSION,
  options,
  // Reddit: at most 1,000 events a request ("Bad Request" beyond).
  maxBatchSize: 1000,
  // Reddit: 10,000 events/s per pixel, so 10 full requests a second; also Event Testing's 10 test events/s (README).
  maxRequestsPerSecond: 10,
  // Reddit: events must be sent within 7 days ("event_at timestamp must be less than 168h0m0s old").
  maxEventAgeDays: 7,
  skipReason,
  toRequest: toRedditRequest,
  parseResponse: fromRedditResponse,
  // Test mode: data.test_id, the id Events Manager → Event Testing shows (README "Test mode").
  testEvents: codedTestMode('testId', 'Test ID (Events Manager → Event Testing)', 'Reddit needs the test id shown in Events Manager → Event Testing'),
  connectionTestGap: 'Reddit documents no read-only call for a conversion access token.',
})

import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { DEFAULT_EVENTS, TIKTOK_API_URL, skipReason, toTrackRequest, type TikTokEventMapping, type TikTokOptions } from './map.ts'
import { requestGroupOf } from './event-source.ts'
import { fromTrackResponse } from './response.ts'
import { codedTestMode } from '../../shared/test-code.ts'
import { TIKTOK_API_VERSION } from './version.ts'

const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))

const pixelCode = v.pipe(
  v.string('must be the pixel code from Events Manager, a string such as "CXXXXXXXXXXXXXXXXXXX"'),
  v.trim(),
  // The numeric "Pixel ID" shown beside the code is not what event_source_id takes.
  v.check((code) => !/^\d+$/.test(code), 'looks like the numeric pixel ID; use the pixel code (letters and digits, e.g. "CXXXXXXXXXXXXXXXXXXX") from Events Manager → Web events'),
  v.regex(/^[A-Za-z0-9]{8,40}$/, 'must be the pixel code from Events Manager (letters and digits, e.g. "CXXXXXXXXXXXXXXXXXXX")'),
)

const eventName = v.nullable(v.pipe(
  v.string('must be a TikTok event name such as "Purchase", or null to not send this event to TikTok'),
  v.trim(),
  v.minLength(1, 'must be a TikTok event name such as "Purchase", or null to not send this event to TikTok'),
))

/** An event set id from Events Manager (digits); a number in the config works too. */
const eventSetId = (what: string) => v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.safeInteger())], `must be the ${what} id from Events Manager (digits)`),
  v.transform((raw) => String(raw).trim()),
  v.regex(/^\d{1,30}$/, `must be the ${what} id from Events Manager (digits only)`),
)

/** Per-site overrides of DEFAULT_EVENTS; a key left out keeps its default, null turns the event off for TikTok. */
const events = v.pipe(
  v.optional(
    perStandardEvent(v.optional(eventName), 'TikTok event names, e.g. { Purchase: "CompletePayment" }'),
    {},
  ),
  v.transform((overrides): TikTokEventMapping => {
    const mapping: TikTokEventMapping = { ...DEFAULT_EVENTS }
    for (const [standard, name] of Object.entries(overrides) as [keyof TikTokEventMapping, string | null | undefined][]) {
      if (name !== undefined) mapping[standard] = name
    }
    return mapping
  }),
)

/** `sites[].destinations.tiktok`; unknown keys are refused so a misspelt `testEventcode` stops boot. */
const options = strictOptions(
  {
    pixelCode,
    accessToken: NonEmpty,
    offlineEventSetId: v.optional(eventSetId('Offline Event Set')),
    crmEventSetId: v.optional(eventSetId('CRM Event Set')),
    testEventCode: v.optional(NonEmpty),
    events,
    baseUrl: v.optional(httpUrl('https://business-api.tiktok.com'), TIKTOK_API_URL),
  },
  'pixelCode and accessToken',
) satisfies v.GenericSchema<unknown, TikTokOptions>

/** TikTok Events API 2.0 (web events for a pixel; offline and CRM events for event sets). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<TikTokOptions>({
  name: 'tiktok',
  label: 'TikTok',
  apiVersion: TIKTOK_API_VERSION,
  options,
  // `data` holds at most 1,000 events; TikTok refuses the whole request beyond that.
  maxBatchSize: 1000,
  // TikTok publishes no Events API request rate; 10 requests/s of up to 1,000 events is our safe share (README "Rate limit").
  maxRequestsPerSecond: 10,
  // TikTok publishes no age limit for web events; 7 days is our decision (README "Event-age window").
  maxEventAgeDays: 7,
  skipReason,
  // One event_source per request: offline and CRM events go in requests of their own (README "Event sources").
  requestGroup: requestGroupOf,
  toRequest: toTrackRequest,
  parseResponse: fromTrackResponse,
  // Test mode: the Events API's test_event_code, shown in Events Manager → the pixel → Test events (README "Test mode").
  testEvents: codedTestMode('testEventCode', 'Test event code (Events Manager → Test events)', 'TikTok needs the test event code shown in Events Manager → Test events'),
  connectionTestGap: 'TikTok\'s read-only pixel list (GET /open_api/v1.3/pixel/list/) needs the advertiser id, which an Events API destination does not hold; Send test event checks the token instead.',
})

import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { SNAP_EVENTS } from './events.ts'
import { skipReason, toSnapchatRequest, type SnapchatOptions } from './map.ts'
import { fromSnapchatResponse } from './response.ts'
import { SNAPCHAT_API_VERSION } from './version.ts'

const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))
const snapEvent = v.union([v.picklist(SNAP_EVENTS), v.literal(false)], `must be a Snapchat event (${SNAP_EVENTS.join(', ')}) or false to not send it`)

/** `sites[].destinations.snapchat`; unknown keys are refused so a misspelt `testmode` stops boot. */
const options = strictOptions(
  {
    pixelId: v.pipe(v.string('must be a string'), v.trim(), v.uuid('must be the Snap Pixel id, a UUID such as 1ec32188-754e-4be2-8e55-c949a984a39f')),
    accessToken: NonEmpty,
    testMode: v.optional(v.boolean('must be true or false')),
    events: v.optional(perStandardEvent(v.optional(snapEvent), 'Snapchat events')),
    baseUrl: v.optional(httpUrl('https://tr.snapchat.com')),
  },
  'pixelId and accessToken',
) satisfies v.GenericSchema<unknown, SnapchatOptions>

/** Snapchat Conversions API v3 (server events for a Snap Pixel). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<SnapchatOptions>({
  name: 'snapchat',
  label: 'Snapchat',
  apiVersion: SNAPCHAT_API_VERSION,
  options,
  // Snap: at most 2,000 events a request (README "Limits").
  maxBatchSize: 2000,
  // Snap: events at most 37 days old are eligible for reporting.
  maxEventAgeDays: 37,
  skipReason,
  toRequest: toSnapchatRequest,
  parseResponse: fromSnapchatResponse,
  // Test mode: Snap's Test Event Tool, POST /v3/{pixelId}/events/validate (README, option `testMode`).
  testEvents: { options: (options) => ({ ...options, testMode: true }) },
  connectionTestGap: 'Snap documents no read-only call for a Conversions API token; Send test event (/events/validate) checks it without recording anything.',
})

import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl } from '../../shared/options.ts'
import { skipReason, toMetaRequest, type MetaOptions } from './map.ts'
import { fromMetaResponse } from './response.ts'
import { metaConnectionTest, metaTestEvents } from './testing.ts'
import { META_API_VERSION } from './version.ts'

const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))

/** `sites[].destinations.meta`; unknown keys are refused so a misspelt `testEventcode` stops boot. */
const options = strictOptions(
  {
    pixelId: v.pipe(
      v.string('must be a string of digits (quote it: numbers this long lose digits)'),
      v.trim(),
      v.regex(/^\d{1,20}$/, 'must be the pixel (dataset) id from Events Manager, digits only'),
    ),
    accessToken: NonEmpty,
    testEventCode: v.optional(NonEmpty),
    baseUrl: v.optional(httpUrl('https://graph.facebook.com')),
  },
  'pixelId and accessToken',
) satisfies v.GenericSchema<unknown, MetaOptions>

/** Meta Conversions API (server events for a pixel / dataset). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<MetaOptions>({
  name: 'meta',
  label: 'Meta',
  // Conversion Leads (CRM integration): a lead qualified after the 7-day window goes as a CRM stage update.
  lateLeadRule: 'as a CRM-qualified lead (action_source system_generated, custom_data.event_source crm, the qualification time as event_time, lead_id when given)',
  apiVersion: META_API_VERSION,
  options,
  // "data: an array of server events, up to 1,000" per request; Meta takes or refuses the request as a whole.
  maxBatchSize: 1000,
  // Meta publishes no Conversions API request rate (README "Batches and rate"): a safe cap, far above any site's
  // conversions at 1,000 events a request, that keeps a retry storm of small requests off the use-case limits.
  maxRequestsPerSecond: 20,
  maxEventAgeDays: 7,
  skipReason,
  toRequest: toMetaRequest,
  parseResponse: fromMetaResponse,
  connectionTest: metaConnectionTest,
  testEvents: metaTestEvents,
})

import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { EVENT_NAME, RESERVED_EVENT_NAMES } from './events.ts'
import { refundSkipReason, requestGroupOf, skipReason, toGa4RefundRequest, toGa4Request, type Ga4Options } from './map.ts'
import { fromGa4Response } from './response.ts'
import { GA4_API_VERSION } from './version.ts'

const NonEmpty = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'))

const ga4Event = v.union([
  v.pipe(
    v.string(),
    v.regex(EVENT_NAME, 'must start with a letter and hold only letters, digits and _ (at most 40)'),
    v.check((name) => !(RESERVED_EVENT_NAMES as readonly string[]).includes(name) && !/^(_|firebase_|ga_|google_|gtag\.)/.test(name), 'is a name GA4 reserves'),
  ),
  v.literal(false),
], 'must be a GA4 event name (e.g. purchase, generate_lead) or false to not send it')

/** `sites[].destinations.ga4`; unknown keys are refused so a misspelt `apisecret` stops boot. */
const options = strictOptions(
  {
    measurementId: v.pipe(v.string('must be a string'), v.trim(), v.regex(/^G-[A-Z0-9]{4,20}$/, 'must be the web stream\'s measurement id, e.g. G-ABC123XYZ (not the stream id)')),
    apiSecret: NonEmpty,
    region: v.optional(v.picklist(['global', 'eu'], 'must be global or eu')),
    validate: v.optional(v.boolean('must be true or false')),
    events: v.optional(perStandardEvent(v.optional(ga4Event), 'GA4 event names')),
    baseUrl: v.optional(httpUrl('https://www.google-analytics.com')),
  },
  'measurementId and apiSecret',
) satisfies v.GenericSchema<unknown, Ga4Options>

/** Google Analytics 4 through the Measurement Protocol (web streams). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<Ga4Options>({
  name: 'ga4',
  label: 'Google Analytics 4',
  apiVersion: GA4_API_VERSION,
  options,
  // Measurement Protocol: "Requests can have a maximum of 25 events."
  maxBatchSize: 25,
  // Measurement Protocol: events may be backdated up to 72 hours.
  maxEventAgeDays: 3,
  skipReason,
  // client_id, user_id, consent and user_data are request-level: one browser and person per request.
  requestGroup: requestGroupOf,
  toRequest: toGa4Request,
  parseResponse: fromGa4Response,
  adjustments: {
    // One refund a request: each refund goes for its own conversion's client_id.
    maxBatchSize: 1,
    maxConversionAgeDays: 3,
    skipReason: refundSkipReason,
    toRequest: toGa4RefundRequest,
    parseResponse: fromGa4Response,
  },
  // Test mode: the Measurement Protocol validation server, /debug/mp/collect (README, option `validate`).
  testEvents: { options: (options) => ({ ...options, validate: true }) },
  connectionTestGap: 'The Measurement Protocol has no call that checks an api_secret: even its validation server does not check it, and /mp/collect answers 2xx to anything.',
})

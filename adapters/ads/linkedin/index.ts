import * as v from 'valibot'
import { defineAdPlatform } from '../../../core/registry.ts'
import { strictOptions } from '../../../core/options.ts'
import { httpUrl, perStandardEvent } from '../../shared/options.ts'
import { authorizeLinkedIn } from './auth.ts'
import { skipReason, toConversionEventsRequest } from './map.ts'
import { parseConversionEventsResponse } from './response.ts'
import { LINKEDIN_API_SUNSET, LINKEDIN_API_VERSION } from './version.ts'

const RULE_URN_PREFIX = 'urn:lla:llaPartnerConversion:'
const RULE_HINT = 'a conversion rule id: the number in Campaign Manager → Analyze → Conversion tracking, or its urn:lla:llaPartnerConversion:<id>'

/** A rule id as digits; the full URN and numbers are accepted, since both are what Campaign Manager and the API show. */
const ruleId = v.optional(v.pipe(
  v.union([v.string(), v.pipe(v.number(), v.safeInteger())], `must be ${RULE_HINT}`),
  v.transform((raw) => String(raw).trim().replace(RULE_URN_PREFIX, '')),
  v.regex(/^\d{1,19}$/, `must be ${RULE_HINT}`),
))
const secret = (what: string) => v.optional(v.pipe(v.string(`must be ${what}`), v.trim(), v.nonEmpty(`must be ${what}`)))

/** `sites[].destinations.linkedin`. Unknown keys are refused so a misspelt option stops boot instead of doing nothing. */
export const linkedInOptions = v.pipe(
  strictOptions(
    {
      /** A static OAuth access token (60 days). Use this, or refreshToken with clientId and clientSecret. */
      accessToken: secret('an OAuth access token with the rw_conversions scope'),
      clientId: secret('the client id of your LinkedIn app (Developer Portal → your app → Auth)'),
      clientSecret: secret('the primary client secret of your LinkedIn app'),
      /** A programmatic refresh token (365 days): dcgate then fetches and caches access tokens itself. */
      refreshToken: secret('a LinkedIn programmatic refresh token'),
      /** One Conversions API rule per standard event; events without one are skipped (see skipReason). */
      conversionRules: v.pipe(
        perStandardEvent(ruleId, 'conversion rule ids'),
        v.check((rules) => Object.values(rules).some(Boolean), 'must give at least one conversion rule id'),
      ),
      /** Test mode: every event goes to this rule (one with no campaigns) instead of its mapped rule. */
      testConversionRule: ruleId,
      baseUrl: v.optional(httpUrl('https://api.linkedin.com'), 'https://api.linkedin.com'),
      oauthUrl: v.optional(httpUrl('https://www.linkedin.com/oauth/v2/accessToken'), 'https://www.linkedin.com/oauth/v2/accessToken'),
    },
    'conversionRules and an accessToken or refreshToken',
  ),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const { accessToken, refreshToken, clientId, clientSecret } = dataset.value
    if (accessToken && refreshToken) addIssue({ message: 'give accessToken or refreshToken (with clientId and clientSecret), not both' })
    else if (!accessToken && !refreshToken) addIssue({ message: 'needs accessToken, or refreshToken with clientId and clientSecret' })
    else if (refreshToken && (!clientId || !clientSecret)) addIssue({ message: 'refreshToken needs clientId and clientSecret too' })
  }),
)

export type LinkedInOptions = v.InferOutput<typeof linkedInOptions>

/** LinkedIn Conversions API (streaming conversion events). Setup, mapping and decisions: README.md. */
export default defineAdPlatform<LinkedInOptions>({
  name: 'linkedin',
  label: 'LinkedIn',
  apiVersion: LINKEDIN_API_VERSION,
  apiSunset: LINKEDIN_API_SUNSET,
  options: linkedInOptions,
  // BATCH_CREATE takes at most 5,000 elements a request.
  maxBatchSize: 5000,
  // 600 requests a minute and 300,000 a day (Salesforce's LinkedIn connector reference; LinkedIn's own rate-limit page
  // publishes none): 3 a second stays under both, and carries up to 15,000 conversions a second (README).
  maxRequestsPerSecond: 3,
  // LinkedIn rejects events that happened more than 90 days ago.
  maxEventAgeDays: 90,
  // userInfo, in plain text as LinkedIn documents it (map.ts toUserInfo).
  clearTraits: ['firstName', 'lastName', 'company', 'title', 'countryCode'],
  skipReason,
  authorize: authorizeLinkedIn,
  toRequest: toConversionEventsRequest,
  parseResponse: parseConversionEventsResponse,
  testEventsGap: 'LinkedIn has no test flag, sandbox or validate-only call: every accepted event is recorded (README "Test mode": a rule with no campaigns, testConversionRule)',
  connectionTestGap: 'LinkedIn documents no read-only call this destination\'s scope (rw_conversions) is sure to allow; a delivery\'s answer shows a token problem.',
})

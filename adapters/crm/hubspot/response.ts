/**
 * HubSpot's error answers as typed poll errors. Bodies are `{ status: "error", message, correlationId, category }`;
 * 429s carry `policyName` (SECONDLY for search, TEN_SECONDLY_ROLLING, DAILY) and, on some routes, Retry-After.
 */
import { isObject } from '../../shared/helpers.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../shared/errors.ts'
import { unexpectedAnswer, waitFrom, type CrmAnswer } from '../shared/http.ts'

/** Without Retry-After, wait out the window HubSpot names: search allows a few requests a second, bursts 10 s. */
const POLICY_WAIT_MS: Record<string, number> = { SECONDLY: 1_000, TEN_SECONDLY_ROLLING: 10_000, DAILY: 3_600_000 }
const DEFAULT_WAIT_MS = 10_000

const TOKEN_HINT = 'create a service key (Development → Keys → Service keys) with the crm.objects.contacts.read scope and set it as accessToken (a legacy private app\'s token works too, but new private apps can no longer be created)'

export function toHubspotError(answer: CrmAnswer): CrmPollError {
  const body = isObject(answer.json) ? answer.json : {}
  const category = typeof body.category === 'string' ? body.category : undefined
  const said = typeof body.message === 'string' ? `${category ? `${category}: ` : ''}${body.message}` : undefined
  const quote = said ? ` (${said}${typeof body.correlationId === 'string' ? `, correlationId ${body.correlationId}` : ''})` : ''

  if (answer.status === 401) {
    return new CrmAuthError('hubspot', `HubSpot refused the access token${quote}: it is wrong, revoked or rotated; ${TOKEN_HINT}`, { status: 401 })
  }
  if (answer.status === 403) {
    return new CrmAuthError('hubspot', `HubSpot refused the search${quote}: the service key or private app lacks a scope; add crm.objects.contacts.read to it, or ${TOKEN_HINT}`, { status: 403 })
  }
  if (answer.status === 429) {
    const policy = typeof body.policyName === 'string' ? body.policyName : ''
    const wait = waitFrom(answer.headers, POLICY_WAIT_MS[policy] ?? DEFAULT_WAIT_MS)
    return new CrmRateLimitError('hubspot', `HubSpot throttled the search${quote}`, { status: 429, retryAfterMs: wait })
  }
  if (answer.status === 400) {
    return new CrmPollError('hubspot', `HubSpot refused the search${quote}: check that property, values and modifiedProperty name contact properties (internal names, e.g. lifecyclestage / salesqualifiedlead / lastmodifieddate)`, { status: 400, retryable: false })
  }
  return unexpectedAnswer('hubspot', answer, DEFAULT_WAIT_MS, said)
}

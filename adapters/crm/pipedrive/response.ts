/**
 * Pipedrive's error answers as typed poll errors. Bodies are `{ success: false, error, error_info, data: null,
 * additional_data: null }` (v1 adds `errorCode`, v2 a `code`). Throttling answers 429 for the 2-second burst window
 * and for the company's daily token budget (`"daily request budget exceeded"`, with a Retry-After of up to hours).
 */
import { isObject } from '../../shared/helpers.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../shared/errors.ts'
import { unexpectedAnswer, waitFrom, type CrmAnswer } from '../shared/http.ts'

/** Pipedrive's burst window is 2 seconds; `x-ratelimit-reset` says how much of it is left. */
const BURST_WINDOW_MS = 2_000

const TOKEN_HINT = 'copy "Your personal API token" from Pipedrive (avatar → Personal preferences → API, https://app.pipedrive.com/settings/api) into apiToken; a token belongs to one user in one company and regenerating it invalidates the old one'

export function toPipedriveError(answer: CrmAnswer): CrmPollError {
  const body = isObject(answer.json) ? answer.json : {}
  const said = typeof body.error === 'string' ? body.error : undefined
  const quote = said ? ` (${said}${typeof body.code === 'string' ? `, ${body.code}` : ''})` : ''

  if (answer.status === 401) return new CrmAuthError('pipedrive', `Pipedrive refused the API token${quote}: ${TOKEN_HINT}`, { status: 401 })
  if (answer.status === 403) {
    return new CrmAuthError('pipedrive', `Pipedrive refused the request${quote}: the token's user may not read deals or persons, or API access is disabled for non-admin users; use a token of a user who sees the qualified deals, or ask an admin to enable API access`, { status: 403 })
  }
  if (answer.status === 429) {
    const reset = Number(answer.headers.get('x-ratelimit-reset'))
    const wait = waitFrom(answer.headers, Number.isFinite(reset) && reset > 0 ? reset * 1000 : BURST_WINDOW_MS)
    return new CrmRateLimitError('pipedrive', `Pipedrive throttled the poll${quote}; its token budget is shared by every integration of the company`, { status: 429, retryAfterMs: wait })
  }
  if (answer.status === 400) {
    return new CrmPollError('pipedrive', `Pipedrive refused the request${quote}: check dealStageIds (numeric stage ids, GET /api/v2/stages) or personField (a person field key, GET /api/v2/personFields)`, { status: 400, retryable: false })
  }
  if (answer.status === 404) {
    return new CrmPollError('pipedrive', `Pipedrive answered 404${quote}: check baseUrl (https://api.pipedrive.com or https://<company>.pipedrive.com)`, { status: 404, retryable: false })
  }
  return unexpectedAnswer('pipedrive', answer, BURST_WINDOW_MS, said)
}

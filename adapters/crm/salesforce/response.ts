/**
 * Salesforce's REST error answers as typed poll errors. Bodies are arrays: `[{ message, errorCode, fields? }]`.
 * The daily API allocation (a rolling 24 hours) and the concurrent long-request limit both answer 403
 * REQUEST_LIMIT_EXCEEDED; a session that expired answers 401 INVALID_SESSION_ID (the poller renews it once first).
 */
import { isObject } from '../../shared/helpers.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from '../shared/errors.ts'
import { unexpectedAnswer, waitFrom, type CrmAnswer } from '../shared/http.ts'

/** The daily allocation frees up gradually over a rolling 24 h; concurrency limits clear within seconds. */
const DAILY_LIMIT_WAIT_MS = 3_600_000
const CONCURRENCY_WAIT_MS = 60_000

export interface SalesforceError {
  errorCode: string
  message: string
}

export function readSalesforceError(json: unknown): SalesforceError | undefined {
  const first: unknown = Array.isArray(json) ? json[0] : undefined
  if (!isObject(first) || typeof first.errorCode !== 'string') return undefined
  return { errorCode: first.errorCode, message: typeof first.message === 'string' ? first.message.replace(/\s+/g, ' ').trim() : '' }
}

export function toSalesforceError(answer: CrmAnswer): CrmPollError {
  const error = readSalesforceError(answer.json)
  const quote = error ? ` (${error.errorCode}: ${error.message})` : ''

  if (error?.errorCode === 'REQUEST_LIMIT_EXCEEDED') {
    const fallback = /TotalRequests/i.test(error.message) ? DAILY_LIMIT_WAIT_MS : CONCURRENCY_WAIT_MS
    const usage = answer.headers.get('sforce-limit-info')
    return new CrmRateLimitError('salesforce', `Salesforce refused the query${quote}${usage ? `, ${usage}` : ''}: the org's API allocation is shared by every integration`, { status: answer.status, retryAfterMs: waitFrom(answer.headers, fallback) })
  }
  if (answer.status === 401) {
    return new CrmAuthError('salesforce', `Salesforce refused a fresh session${quote}: check the connected app's IP relaxation and session policies, then authorize it again and set the new refreshToken`, { status: 401 })
  }
  if (answer.status === 403) {
    return new CrmAuthError('salesforce', `Salesforce refused the query${quote}: the refresh token's user needs the "API Enabled" permission and read access to Lead (Status, Email and the modification field)`, { status: 403 })
  }
  if (answer.status === 400 && error?.errorCode === 'INVALID_QUERY_LOCATOR') {
    return new CrmPollError('salesforce', `Salesforce dropped the query's cursor${quote}; the next poll starts again from the stored cursor`, { status: 400, retryable: true })
  }
  if (answer.status === 400 && error) {
    return new CrmPollError('salesforce', `Salesforce refused the query${quote}: check statuses (Lead Status picklist API names) and modifiedField`, { status: 400, retryable: false })
  }
  return unexpectedAnswer('salesforce', answer, CONCURRENCY_WAIT_MS, error ? `${error.errorCode}: ${error.message}` : undefined)
}

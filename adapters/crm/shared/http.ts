/**
 * One HTTP exchange with a CRM: the request under the poll's signal, the answer read whole. A failure to get an
 * answer becomes a retryable CrmPollError; an abort rethrows the signal's reason. Each poller classifies the answers
 * it knows (its auth, throttling and validation bodies) and leaves the rest to `unexpectedAnswer`.
 */
import { bodySnippet, isRetryableStatus, parseJson, retryAfterMs } from '../../shared/helpers.ts'
import type { CrmPollContext } from '../../../core/registry.ts'
import { CrmAuthError, CrmPollError, CrmRateLimitError } from './errors.ts'

export interface CrmAnswer {
  status: number
  headers: Headers
  text: string
  /** The body parsed as JSON, undefined when it is not JSON (proxies answer HTML). */
  json: unknown
}

/** Sends the request and reads the answer; `crm` names the CRM in messages. */
export async function exchange(crm: string, ctx: CrmPollContext, url: string, init: RequestInit): Promise<CrmAnswer> {
  try {
    const response = await ctx.fetch(url, { ...init, signal: ctx.signal })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, json: parseJson(text) }
  }
  catch (error) {
    throw noAnswer(crm, ctx, url, error)
  }
}

/** A request that got no answer: the signal's own reason when it was aborted, else a retryable CrmPollError. */
export function noAnswer(crm: string, ctx: CrmPollContext, url: string, error: unknown): unknown {
  if (ctx.signal.aborted) return ctx.signal.reason
  const reason = error instanceof Error ? error.message : String(error)
  return new CrmPollError(crm, `${label(crm)}: no answer from ${where(url)}: ${reason}`, { status: null, retryable: true }, { cause: error })
}

/** Milliseconds from Retry-After (seconds or an HTTP date), else the fallback the CRM documents. */
export function waitFrom(headers: Headers, fallbackMs: number): number {
  const ms = retryAfterMs(headers)
  return ms !== undefined && ms > 0 ? ms : fallbackMs
}

/**
 * An answer the poller's own rules did not cover: 401/403 are credentials, 429 throttling (Retry-After or
 * `fallbackWaitMs`), 5xx (not 501), 408 and 423 retry, any other status is a problem the operator must look at.
 */
export function unexpectedAnswer(crm: string, answer: CrmAnswer, fallbackWaitMs: number, vendorMessage?: string): CrmPollError {
  const message = `${label(crm)} answered HTTP ${answer.status}: ${vendorMessage ?? (bodySnippet(answer.text) || 'empty body')}`
  if (answer.status === 401 || answer.status === 403) return new CrmAuthError(crm, message, { status: answer.status })
  if (answer.status === 429) return new CrmRateLimitError(crm, message, { status: 429, retryAfterMs: waitFrom(answer.headers, fallbackWaitMs) })
  return new CrmPollError(crm, message, { status: answer.status, retryable: isRetryableStatus(answer.status, answer.headers) })
}

/** A 2xx answer whose body is not what the API documents (a proxy page, a changed API). Retryable: it may be transient. */
export function unreadableAnswer(crm: string, answer: CrmAnswer, expected: string): CrmPollError {
  // No snippet of the body: a 2xx answer of a CRM is its contacts and deals, and this message is logged and stored
  // (crm_poll_state.last_error). Its size and first character say enough to tell HTML from truncated JSON.
  const shape = answer.text.length === 0 ? 'an empty body' : `${answer.text.length} bytes starting with ${JSON.stringify(answer.text.trimStart().charAt(0))}`
  return new CrmPollError(crm, `${label(crm)} answered HTTP ${answer.status} without ${expected}: ${shape}`, { status: answer.status, retryable: true })
}

// --- internal ---

const LABELS: Record<string, string> = { hubspot: 'HubSpot', pipedrive: 'Pipedrive', salesforce: 'Salesforce' }

function label(crm: string): string {
  return LABELS[crm] ?? crm
}

/** Origin and path only: queries may carry a SOQL filter or a token a careless proxy put there. */
function where(url: string): string {
  try {
    const { origin, pathname } = new URL(url)
    return `${origin}${pathname}`
  }
  catch {
    return 'the CRM'
  }
}

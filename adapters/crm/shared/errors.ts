/**
 * What a poll throws, so the scheduler can act without reading vendor messages: back off for `retryAfterMs` on a
 * rate limit, stop and tell the operator on an auth failure, retry later when `retryable`, alert otherwise.
 * An abort (shutdown, the scheduler's timeout) is not wrapped: the signal's own reason is thrown.
 */

export class CrmPollError extends Error {
  override name = 'CrmPollError'
  /** The poller's name: hubspot, pipedrive, salesforce. */
  readonly crm: string
  /** The HTTP status, or null when no answer arrived. */
  readonly status: number | null
  readonly retryable: boolean
  constructor(crm: string, message: string, details: { status: number | null, retryable: boolean }, options?: ErrorOptions) {
    super(message, options)
    this.crm = crm
    this.status = details.status
    this.retryable = details.retryable
  }
}

/** The CRM throttled us (HTTP 429, HubSpot's per-second search limit, Salesforce REQUEST_LIMIT_EXCEEDED). */
export class CrmRateLimitError extends CrmPollError {
  override name = 'CrmRateLimitError'
  /** How long to wait before the next poll: the CRM's Retry-After when it sends one, else the CRM's documented window. */
  readonly retryAfterMs: number
  constructor(crm: string, message: string, details: { status: number | null, retryAfterMs: number }) {
    super(crm, message, { status: details.status, retryable: true })
    this.retryAfterMs = details.retryAfterMs
  }
}

/** The credentials are missing, wrong, revoked or lack a scope: polling again will not help until the operator acts. */
export class CrmAuthError extends CrmPollError {
  override name = 'CrmAuthError'
  constructor(crm: string, message: string, details: { status: number | null }) {
    super(crm, message, { status: details.status, retryable: false })
  }
}

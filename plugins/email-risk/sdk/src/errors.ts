/** Every error checkEmail throws extends this one; `code` tells them apart without instanceof. */
export class DCServiceBaseError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** The email (or an option) is not valid: nothing was sent. */
export class DCServiceValidationError extends DCServiceBaseError {
  constructor(message: string) {
    super('VALIDATION', message)
  }
}

/** The API answered 4xx or 5xx (401 bad key, 429 quota used up, 500…): `status` and the parsed `body`. */
export class DCServiceError extends DCServiceBaseError {
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: unknown) {
    const message = typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : `HTTP ${status}`
    super('API', `dcgate answered ${status}: ${message}`)
    this.status = status
    this.body = body
  }
}

/** No answer within `timeout` ms. */
export class DCServiceTimeoutError extends DCServiceBaseError {
  readonly timeout: number
  constructor(timeout: number) {
    super('TIMEOUT', `dcgate did not answer within ${timeout} ms`)
    this.timeout = timeout
  }
}

/** The caller's AbortSignal aborted the check. */
export class DCServiceAbortError extends DCServiceBaseError {
  constructor(reason: unknown) {
    super('ABORTED', 'The email check was aborted', { cause: reason })
  }
}

/** The request did not reach dcgate, or the connection broke (DNS, refused, reset, TLS). */
export class DCServiceNetworkError extends DCServiceBaseError {
  constructor(cause: unknown) {
    super('NETWORK', `Could not reach dcgate: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`, { cause })
  }
}

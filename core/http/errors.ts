import { HTTPError } from 'h3'
import { FastResponse } from 'srvx'

/**
 * An HTTP error whose JSON body is exactly `body` (the spec's shapes, e.g. `{message: "Invalid API key"}`).
 * Every error dcgate answers has at least a `message`.
 */
export function apiError(status: number, body: { message: string } & Record<string, unknown>, headers?: HeadersInit): HTTPError {
  return new HTTPError({ status, message: body.message, body, headers })
}

/** The body an error is answered with: the spec's shape, never a stack or an internal message. */
export function errorBody(error: HTTPError): Record<string, unknown> {
  if (error.unhandled || error.status >= 500 && !error.body) return { message: 'Internal server error' }
  return error.body ?? { message: error.message }
}

/**
 * A JSON answer with a Content-Length. srvx streams a web Response's body, chunked; its FastResponse hands a string to
 * the socket whole, as the hot routes' answers (answer.ts) are.
 */
export function jsonResponse(status: number, body: unknown, headers?: Headers): Response {
  const merged = new Headers(headers)
  merged.set('content-type', 'application/json;charset=UTF-8')
  return new FastResponse(JSON.stringify(body), { status, headers: merged })
}

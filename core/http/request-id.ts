import { randomUUID } from 'node:crypto'
import type { H3Event } from 'h3'

declare module 'h3' {
  interface H3EventContext {
    /** This request's id (LOG_FORMAT=json): the caller's x-request-id when sane, else a new UUID. */
    requestId?: string
  }
}

export const REQUEST_ID_HEADER = 'x-request-id'

/** What an incoming id may look like: a UUID, a proxy's hex or base64url id, a trace id; never free text for the logs. */
const SANE_ID = /^[\w.:-]{8,128}$/

/** The caller's id when it is sane (a proxy or client tracing the request), else a new one. */
export function requestIdOf(incoming: string | null): string {
  return incoming && SANE_ID.test(incoming) ? incoming : randomUUID()
}

/**
 * Gives the request its id and has its answer carry it: `event.res.headers` for an answer below 400, `errHeaders`
 * for an error Response a handler returns. A thrown error's answer is built by the app's onError, which adds it.
 */
export function assignRequestId(event: H3Event): string {
  const id = requestIdOf(event.req.headers.get(REQUEST_ID_HEADER))
  event.context.requestId = id
  event.res.headers.set(REQUEST_ID_HEADER, id)
  event.res.errHeaders.set(REQUEST_ID_HEADER, id)
  return id
}

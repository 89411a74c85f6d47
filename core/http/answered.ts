/**
 * The `request:answered` hook: after a request that belongs to a site (its private key, cop_key or webhook path named
 * one) is answered, listeners get what a person may see of it — route pattern, status and the refusal's code and
 * message — never the path (keys), the body or the client. Called without waiting, so a listener never slows an answer.
 */
import type { H3Event } from 'h3'
import type { DcgateHookable } from '../hooks.ts'
import { routePattern } from './route-pattern.ts'

declare module 'h3' {
  interface H3EventContext {
    /** The refusal this request was answered with (set by the app's onError): its code and message. */
    refusal?: { code?: string, message: string }
    /** Parts of a 200 answer refused one by one (a Segment batch's refused messages), set by the route. */
    partlyRefused?: { refused: number, reasons: readonly string[] }
  }
}

export interface AnsweredRequest {
  siteId: string
  at: Date
  method: string
  /** The route pattern (`/api/v1/conversions/:source/:api_key`), never the path. */
  route: string
  /** A webhook's source name (the `:source` path parameter), the only path part that is shown. */
  source?: string
  status: number
  code?: string
  message?: string
  partlyRefused?: { refused: number, reasons: readonly string[] }
}

/** The app's onResponse part: calls the hook for a request whose site is known (by key, cop_key or webhook path). */
export function createAnsweredReporter(hooks: DcgateHookable, report: (error: unknown) => void) {
  return (response: Response, event: H3Event): void => {
    const site = event.context.site ?? event.context.captureSite
    if (!site) return
    const source = event.context.params?.source
    const answered: AnsweredRequest = {
      siteId: site.id, at: new Date(), method: event.req.method, route: routePattern(event), status: response.status,
      ...(source ? { source } : {}), ...event.context.refusal, ...(event.context.partlyRefused ? { partlyRefused: event.context.partlyRefused } : {}),
    }
    Promise.resolve(hooks.callHook('request:answered', answered)).catch(report)
  }
}

/** onError's part: keeps the refusal's code and message for the hook (the body the client gets says the same). */
export function noteRefusal(event: H3Event | undefined, body: Record<string, unknown>): void {
  if (!event) return
  event.context.refusal = { message: String(body.message ?? ''), ...(typeof body.code === 'string' ? { code: body.code } : {}) }
}

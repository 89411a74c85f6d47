/**
 * The `requests:answered` hook: after requests that belong to a site (its private key, cop_key or webhook path named
 * one) are answered, listeners get what a person may see of them — route pattern, status and the refusal's code and
 * message — never the path (keys), the body or the client. Handed over in batches, once per turn of the event loop:
 * a request pays a push to an array, not a hook call (hookable's chain of promises cost several times that).
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

/** Past this many answers waiting for their turn (a blocked event loop), more are not reported. */
const MAX_PENDING = 10_000

/** The app's onResponse part: queues a request whose site is known (by key, cop_key or webhook path) for the hook. */
export function createAnsweredReporter(hooks: DcgateHookable, report: (error: unknown) => void) {
  let pending: AnsweredRequest[] = []
  const handOver = () => {
    const batch = pending
    pending = []
    Promise.resolve(hooks.callHook('requests:answered', batch)).catch(report)
  }
  return (response: Response, event: H3Event): void => {
    const site = event.context.site ?? event.context.captureSite
    if (!site || pending.length >= MAX_PENDING) return
    const answered: AnsweredRequest = { siteId: site.id, at: new Date(), method: event.req.method, route: routePattern(event), status: response.status }
    const source = event.context.params?.source
    if (source) answered.source = source
    if (event.context.refusal) Object.assign(answered, event.context.refusal)
    if (event.context.partlyRefused) answered.partlyRefused = event.context.partlyRefused
    if (pending.push(answered) === 1) setImmediate(handOver)
  }
}

/** onError's part: keeps the refusal's code and message for the hook (the body the client gets says the same). */
export function noteRefusal(event: H3Event | undefined, body: Record<string, unknown>): void {
  if (!event) return
  event.context.refusal = { message: String(body.message ?? ''), ...(typeof body.code === 'string' ? { code: body.code } : {}) }
}

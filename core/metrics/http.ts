import type { H3Event } from 'h3'
import type { ConsolaInstance } from 'consola'
import { isDebug, logsJson } from '../logger.ts'
import { assignRequestId } from '../http/request-id.ts'
import { routePattern } from '../http/route-pattern.ts'
import { metrics } from './registry.ts'

declare module 'h3' {
  interface H3EventContext {
    /** performance.now() when the request arrived (the duration metric). */
    startedAt?: number
  }
}

/** Methods counted by name; anything else a client sends is `OTHER`, so no client can add label values. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/**
 * The app's onRequest/onResponse: every answer is counted and timed by route pattern (event.context.matchedRoute,
 * never the path: no ids or keys in labels); with LOG_FORMAT=json each request gets an id (core/http/request-id.ts);
 * at debug level one line per request, naming the route pattern, never the path (it may hold a key or a secret).
 */
export function createRequestObserver(logger: ConsolaInstance) {
  const ids = logsJson(logger)
  const debug = isDebug(logger)
  return {
    onRequest: (event: H3Event) => {
      // On the context rather than in a WeakMap: an entry per request in a WeakMap is work for every GC.
      event.context.startedAt = performance.now()
      if (ids) assignRequestId(event)
    },
    onResponse: (response: Response, event: H3Event) => {
      const now = performance.now()
      const ms = now - (event.context.startedAt ?? now)
      const method = METHODS.has(event.req.method) ? event.req.method : 'OTHER'
      const labels = { method, route: routePattern(event), status: String(response.status) }
      const series = seriesOf(labels)
      series.requests.inc()
      series.duration.observe(ms / 1000)
      if (!debug) return
      if (ids) logger.debug({ message: 'request', requestId: event.context.requestId, ...labels, ms: Math.round(ms * 10) / 10 })
      else logger.debug(`${method} ${labels.route} ${response.status} ${ms.toFixed(1)}ms`)
    },
  }
}

type Labels = { method: string, route: string, status: string }
interface Series { requests: { inc: () => void }, duration: { observe: (value: number) => void } }
/**
 * Label sets are few (routes × methods × statuses); their children are kept, so a request builds no label object
 * (prom-client still hashes the labels inside each call).
 */
const SERIES = new Map<string, Series>()

function seriesOf(labels: Labels): Series {
  const key = `${labels.method} ${labels.status} ${labels.route}`
  let series = SERIES.get(key)
  if (!series) {
    series = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) }
    SERIES.set(key, series)
  }
  return series
}

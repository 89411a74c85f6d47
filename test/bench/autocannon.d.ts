// autocannon 9 ships no types; this declares the small part of its programmatic API the benchmarks use.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  export interface Options {
    url: string
    connections?: number
    /** Seconds. */
    duration?: number
    pipelining?: number
    method?: string
    headers?: Record<string, string>
    /** Seconds before a request counts as timed out. */
    timeout?: number
    body?: string
    /** Request templates; `setupRequest` may rewrite each request before it is sent (e.g. a unique id per body). */
    requests?: { method?: string, path?: string, headers?: Record<string, string>, body?: string, setupRequest?: (request: { body?: string, headers?: Record<string, string> }) => { body?: string, headers?: Record<string, string> } }[]
  }

  export interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p90: number
    p99: number
  }

  export interface Result {
    duration: number
    errors: number
    timeouts: number
    /** Responses whose status was not 2xx. */
    non2xx: number
    resets: number
    mismatches: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
    latency: Histogram & { totalCount: number }
    requests: Histogram & { sent: number }
    throughput: Histogram
  }

  /** Emits `response` once per answered request: (client, statusCode, bytes, responseTimeMs). */
  export interface Instance extends EventEmitter {
    stop: () => void
  }

  export default function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance
}

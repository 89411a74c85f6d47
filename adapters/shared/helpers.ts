/**
 * What every adapter (ad platforms and CRM pollers) needs the same way, written once: reading an HTTP answer (JSON
 * that may not be JSON, a body excerpt, Retry-After, HTTP's own retry rule) and checking that a value is a digest
 * before it is sent. Only HTTP's and dcgate's rules live here; what a vendor's codes and bodies mean stays in its
 * adapter. Not an adapter: it sits outside adapters/ads, adapters/crm and adapters/sources.
 */
import type { DeliveryOutcome } from '../../core/delivery/types.ts'

const SHA256_HEX = /^[0-9a-f]{64}$/

/** core/identity writes digests as 64 lower-case hex characters; adapters send nothing else, so plain data never leaves. */
export function isSha256Hex(value: string | undefined): value is string {
  return value !== undefined && SHA256_HEX.test(value)
}

/** JSON.parse that answers undefined instead of throwing: parseResponse must never throw, and proxies answer HTML. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  }
  catch {
    return undefined
  }
}

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The body when it is a JSON object, else undefined. */
export function parseJsonObject(text: string): Record<string, any> | undefined {
  const value = parseJson(text)
  return isObject(value) ? value : undefined
}

/** Up to 200 characters of a body for a message, tags stripped (HTML error pages) and white space folded; '' if none. */
export function bodySnippet(body: string): string {
  return body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200)
}

/** The message for an answer without the platform's error body: `<platform> answered HTTP 502: <excerpt>`. */
export function describeHttp(platform: string, status: number, body: string): string {
  const text = bodySnippet(body)
  return text ? `${platform} answered HTTP ${status}: ${text}` : `${platform} answered HTTP ${status} with an empty body`
}

/** When the platform answered, by its `Date` header, else our clock: waits are measured on the platform's clock. */
export function answeredAt(headers: Headers): number {
  const date = Date.parse(headers.get('date') ?? '')
  return Number.isNaN(date) ? Date.now() : date
}

/** Milliseconds to wait from `Retry-After`: seconds (a fraction is tolerated), or an HTTP date measured from answeredAt. */
export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - answeredAt(headers))
}

/**
 * HTTP's own verdict, for what the platform's codes left open: 429, 408, 423, 409 with Retry-After and 5xx except
 * 501 may pass; any other status will not (docs/writing-an-adapter.md, response.ts rules; the contract suite checks it).
 */
export function isRetryableStatus(status: number, headers: Headers): boolean {
  return status === 429 || status === 408 || status === 423
    || (status === 409 && headers.has('retry-after'))
    || (status >= 500 && status !== 501)
}

/** A retry, with retryAfterMs only when there is a wait: outcomes are compared whole, an `undefined` key would show. */
export function retry(message: string, afterMs: number | undefined): DeliveryOutcome {
  return afterMs === undefined ? { status: 'retry', message } : { status: 'retry', message, retryAfterMs: afterMs }
}

/** isRetryableStatus as an outcome: a retry after Retry-After, or rejected. */
export function outcomeByStatus(status: number, headers: Headers, message: string): DeliveryOutcome {
  return isRetryableStatus(status, headers) ? retry(message, retryAfterMs(headers)) : { status: 'rejected', message }
}

/** GA4's client id from a `_ga` cookie value (`GA1.1.<a>.<b>`) or as given (`<a>.<b>`); anything else is not one. */
export function gaClientId(value: string | undefined): string | undefined {
  return /^(?:GA\d\.\d+\.)?(\d+\.\d+)$/.exec(value?.trim() ?? '')?.[1]
}

import type { AdPlatformDefinition, AuthContext } from '../registry.ts'
import type { DeliveryOutcome, PlatformRequest, PlatformResponse } from './types.ts'
import { httpRequest } from './http-request.ts'

export interface DispatchResult {
  outcomes: DeliveryOutcome[]
  httpStatus: number | null
  durationMs: number
  /** The platform's id of the request it took, to read its diagnostics later (the adapter's `diagnostics.receiptOf`). */
  receipt?: string
}

/** What one call carries: an adapter's mapping of conversions, or of refunds (`adjustments`), and its authorization. */
export interface Wire<T> {
  toRequest: (items: readonly T[], options: unknown) => PlatformRequest
  parseResponse: (response: PlatformResponse, items: readonly T[]) => DeliveryOutcome[]
  authorize?: AdPlatformDefinition<unknown>['authorize']
}

/**
 * One call to one platform: authorize, map, send, classify. Never throws: a timeout or a connection
 * error is a retry for every event, a failure to authorize too (the message says why).
 */
export async function dispatch<T>(
  platform: AdPlatformDefinition<unknown>, options: unknown, events: readonly T[],
  ctx: { cache: AuthContext['cache'], timeoutMs: number, credentials?: AuthContext['credentials'] },
  wire: Wire<T> = platform as unknown as Wire<T>,
): Promise<DispatchResult> {
  const started = performance.now()
  const signal = AbortSignal.timeout(ctx.timeoutMs)
  const all = (outcome: DeliveryOutcome) => events.map(() => outcome)
  const finish = (outcomes: DeliveryOutcome[], httpStatus: number | null) => ({ outcomes, httpStatus, durationMs: Math.round(performance.now() - started) })
  // `fresh` skips cached credentials: after a 401 a cached access token may have been revoked early.
  const authorizeWith = wire.authorize ?? platform.authorize
  const authorize = async (fresh: boolean) => authorizeWith
    ? authorizeWith(options, { fetch, cache: fresh ? { get: async () => null, set: ctx.cache.set } : ctx.cache, signal, credentials: ctx.credentials })
    : {}
  let request: PlatformRequest
  try {
    request = wire.toRequest(events, options)
  }
  catch (error) {
    // A mapping that cannot be built will not build on a retry either.
    return finish(all({ status: 'rejected', message: `could not build the ${platform.name} request: ${messageOf(error)}` }), null)
  }
  const send = async (fresh: boolean) => {
    let headers: Record<string, string>
    try {
      headers = await authorize(fresh)
    }
    catch (error) {
      throw new AuthorizeError(error)
    }
    const response = await httpRequest(request.url, { method: request.method, headers: { ...request.headers, ...headers }, body: request.body, signal })
    return { status: response.statusCode, headers: toHeaders(response.headers), body: response.body }
  }
  let response: Awaited<ReturnType<typeof send>>
  try {
    response = await send(false)
    if (response.status === 401 && authorizeWith) {
      await response.body.dump()
      response = await send(true)
    }
  }
  catch (error) {
    if (error instanceof AuthorizeError) {
      // An adapter marks authorization answers that need the operator (a revoked refresh token) as not retryable.
      const retryable = (error.cause as { retryable?: unknown }).retryable !== false
      return finish(all({ status: retryable ? 'retry' : 'rejected', message: `authorization failed: ${messageOf(error.cause)}` }), null)
    }
    if (signal.aborted) return finish(all({ status: 'retry', message: `no answer within ${ctx.timeoutMs} ms` }), null)
    return finish(all({ status: 'retry', message: `connection failed: ${messageOf(error)}` }), null)
  }
  const body = await response.body.text().catch(() => '')
  let outcomes: DeliveryOutcome[]
  try {
    outcomes = wire.parseResponse({ status: response.status, headers: response.headers, body }, events)
  }
  catch (error) {
    return finish(all({ status: 'rejected', message: `could not read the ${platform.name} answer (HTTP ${response.status}): ${messageOf(error)}` }), response.status)
  }
  if (outcomes.length !== events.length) {
    return finish(all({ status: 'rejected', message: `adapter ${platform.name} returned ${outcomes.length} outcomes for ${events.length} events` }), response.status)
  }
  const receipt = readReceipt(platform, { status: response.status, headers: response.headers, body })
  return { ...finish(outcomes, response.status), ...(receipt ? { receipt } : {}) }
}

/** An adapter bug reading the id costs the diagnostics of one request, never the delivery. */
function readReceipt(platform: AdPlatformDefinition<unknown>, response: PlatformResponse): string | undefined {
  if (!platform.diagnostics || response.status < 200 || response.status >= 300) return undefined
  try {
    return platform.diagnostics.receiptOf(response)
  }
  catch {
    return undefined
  }
}

/** A failure in the adapter's authorize step, kept apart from a failure to reach the platform. */
class AuthorizeError extends Error {
  constructor(cause: unknown) {
    super('authorize failed', { cause })
  }
}

/** undici's raw headers as a Headers object (also read by diagnostics.ts). */
export function toHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item)
    else if (value !== undefined) headers.set(name, value)
  }
  return headers
}

function messageOf(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause?.message
  return `${error instanceof Error ? error.message : String(error)}${cause ? ` (${cause})` : ''}`
}

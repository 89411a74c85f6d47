/**
 * The dashboard's "Test connection" and "Send test event": one call to one platform, outside the outbox, whose answer
 * is shown to the person who asked and never stored as a delivery. A test event goes only in the platform's documented
 * test mode (the adapter's `testEvents`); a platform without one is not called.
 */
import type { AdPlatformDefinition, AuthContext, ConnectionVerdict } from '../registry.ts'
import { platformVerdict } from './platform-verdict.ts'
import type { ConversionEvent, PlatformRequest, PlatformResponse } from './types.ts'

export interface TryResult {
  ok: boolean
  /** The platform's HTTP status; null when no call was made or it got no answer. */
  status: number | null
  /** The platform's own words (its error message, or what it answered), or why nothing was sent. */
  message: string
}

export interface TryContext {
  timeoutMs: number
  credentials?: AuthContext['credentials']
}

/** Longest part of a vendor's answer shown on the page. */
const SHOWN_CHARS = 600

export async function testConnection(platform: AdPlatformDefinition<unknown>, options: unknown, ctx: TryContext): Promise<TryResult> {
  const test = platform.connectionTest
  if (!test) return { ok: false, status: null, message: platform.connectionTestGap ?? `${labelOf(platform)} documents no call that only reads the account; nothing was sent.` }
  return call(platform, options, ctx, (auth) => test.toRequest(options, auth), (response) => (test.parseResponse ?? genericVerdict)(response, options))
}

export async function sendTestEvent(platform: AdPlatformDefinition<unknown>, options: unknown, event: ConversionEvent, code: string | undefined, ctx: TryContext): Promise<TryResult> {
  const support = platform.testEvents
  if (!support) return { ok: false, status: null, message: platform.testEventsGap ?? `${labelOf(platform)} documents no test mode; nothing was sent.` }
  const testOptions = support.options(options, code)
  if (isRefusal(testOptions)) return { ok: false, status: null, message: testOptions.refused }
  const verdict = platformVerdict(platform, testOptions, event)
  if (verdict.kind !== 'send') return { ok: false, status: null, message: `not sent: ${verdict.reason}` }
  return call(platform, testOptions, ctx, () => platform.toRequest([event], testOptions), (response) => {
    const outcome = platform.parseResponse(response, [event])[0]
    const words = excerpt(response.body)
    if (outcome?.status === 'sent') return { ok: true, message: words || 'accepted' }
    return { ok: false, message: outcome && 'message' in outcome ? outcome.message : words }
  })
}

async function call(
  platform: AdPlatformDefinition<unknown>, options: unknown, ctx: TryContext,
  build: (auth: Record<string, string>) => PlatformRequest, judge: (response: PlatformResponse) => ConnectionVerdict,
): Promise<TryResult> {
  const signal = AbortSignal.timeout(ctx.timeoutMs)
  // No shared token cache: a test must prove the credentials as configured now, not a token cached before a change.
  const cache = { get: async () => null, set: async () => {} }
  let auth: Record<string, string> = {}
  try {
    auth = platform.authorize ? await platform.authorize(options, { fetch, cache, signal, credentials: ctx.credentials }) : {}
  }
  catch (error) {
    return { ok: false, status: null, message: `authorization failed: ${messageOf(error)}` }
  }
  let request: PlatformRequest
  try {
    request = build(auth)
  }
  catch (error) {
    return { ok: false, status: null, message: `could not build the ${platform.name} request: ${messageOf(error)}` }
  }
  try {
    const answer = await fetch(request.url, {
      method: request.method, headers: { ...request.headers, ...auth }, signal, redirect: 'manual',
      ...(request.method === 'GET' ? {} : { body: request.body }),
    })
    const response = { status: answer.status, headers: answer.headers, body: await answer.text() }
    return { ...judge(response), status: response.status }
  }
  catch (error) {
    if (signal.aborted) return { ok: false, status: null, message: `no answer within ${ctx.timeoutMs} ms` }
    return { ok: false, status: null, message: `connection failed: ${messageOf(error)}` }
  }
}

/** Any 2xx is a working connection; otherwise the vendor's error message, wherever its body keeps it. */
export function genericVerdict(response: PlatformResponse): ConnectionVerdict {
  if (response.status >= 200 && response.status < 300) return { ok: true, message: excerpt(response.body) || 'connected' }
  return { ok: false, message: vendorMessage(response.body) ?? (excerpt(response.body) || `HTTP ${response.status}`) }
}

/** The message of the error shapes the vendors use: Graph's error.message, OAuth's error_description, {message}, errors[0]. */
export function vendorMessage(body: string): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  }
  catch {
    return undefined
  }
  const at = (value: unknown, key: string | number) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined)
  const candidates = [
    at(at(parsed, 'error'), 'message'), at(parsed, 'error_description'), at(parsed, 'message'), at(at(parsed, 'errors'), 0) && at(at(at(parsed, 'errors'), 0), 'message'),
    at(parsed, 'detail'), typeof at(parsed, 'error') === 'string' ? at(parsed, 'error') : undefined,
  ]
  const found = candidates.find((c): c is string => typeof c === 'string' && c.length > 0)
  return found === undefined ? undefined : excerpt(found)
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > SHOWN_CHARS ? `${flat.slice(0, SHOWN_CHARS)}…` : flat
}

const labelOf = (platform: AdPlatformDefinition<unknown>) => platform.label ?? platform.name
const isRefusal = (value: unknown): value is { refused: string } => typeof value === 'object' && value !== null && 'refused' in value && typeof (value as { refused: unknown }).refused === 'string'
const messageOf = (error: unknown) => error instanceof Error ? error.message : String(error)

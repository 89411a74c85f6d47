/** The Connect flow's outbound calls: each with a timeout, errors turned into the vendor's own words (VendorError). */
import { VendorError, oneLine } from './errors.ts'
import type { ConnectApp, Fetch, Grant } from './types.ts'

/** A fetch that gives up after `timeoutMs`, as every outbound call must. */
export function timedFetch(timeoutMs: number, base: typeof fetch = fetch): Fetch {
  return (url, init = {}) => base(url, { ...init, signal: AbortSignal.timeout(timeoutMs) })
}

export interface JsonAnswer { status: number, json: any, text: string }

/** One call; an answer that did not come (timeout, refused connection) is a VendorError naming the vendor. */
export async function callJson(fetch: Fetch, vendor: string, url: string, init: RequestInit = {}): Promise<JsonAnswer> {
  let response: Response
  try {
    response = await fetch(url, { ...init, headers: { accept: 'application/json', ...init.headers } })
  }
  catch (error) {
    throw new VendorError(`${vendor} did not answer (${error instanceof Error ? error.message : String(error)})`)
  }
  const text = await response.text().catch(() => '')
  let json: any
  try {
    json = JSON.parse(text)
  }
  catch {
    json = undefined
  }
  return { status: response.status, json, text }
}

/** `{ error, error_description }` (RFC 6749 §5.2) or the vendor's own shape, as one line the owner reads. */
export function describeError(vendor: string, answer: JsonAnswer): VendorError {
  const body = answer.json
  if (body && typeof body.error === 'string') {
    const description = typeof body.error_description === 'string' ? `: ${oneLine(body.error_description)}` : ''
    return new VendorError(`${vendor} refused: ${body.error}${description}`, body.error)
  }
  const message = body?.error?.message ?? body?.message ?? body?.error_description
  if (typeof message === 'string') return new VendorError(`${vendor} refused (HTTP ${answer.status}): ${oneLine(message)}`)
  return new VendorError(`${vendor} answered HTTP ${answer.status}${answer.text ? `: ${oneLine(answer.text).slice(0, 200)}` : ''}`)
}

/** A GET or POST that must answer 2xx with JSON; anything else is the vendor's error. */
export async function okJson(fetch: Fetch, vendor: string, url: string, init: RequestInit = {}): Promise<any> {
  const answer = await callJson(fetch, vendor, url, init)
  if (answer.status < 200 || answer.status >= 300 || answer.json === undefined) throw describeError(vendor, answer)
  return answer.json
}

export interface CodeExchange {
  code: string
  verifier?: string
  /** `post` sends the client's secret in the form (client_secret_post); `basic` in an Authorization header. */
  clientAuth: 'post' | 'basic'
}

/** A call that must answer 2xx, whatever its body (a revoke endpoint answers 200 with nothing). */
export async function okStatus(fetch: Fetch, vendor: string, url: string, init: RequestInit = {}): Promise<void> {
  const answer = await callJson(fetch, vendor, url, init)
  if (answer.status < 200 || answer.status >= 300) throw describeError(vendor, answer)
}

/** The authorization-code grant (RFC 6749 §4.1.3) as a form POST; the answer's other string fields are kept. */
export async function exchangeCode(fetch: Fetch, vendor: string, app: ConnectApp, exchange: CodeExchange): Promise<Grant> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: exchange.code, redirect_uri: app.redirectUri })
  if (exchange.verifier) form.set('code_verifier', exchange.verifier)
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (exchange.clientAuth === 'basic') headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64')}`
  else {
    form.set('client_id', app.clientId)
    form.set('client_secret', app.clientSecret)
  }
  const answer = await callJson(fetch, vendor, app.tokenUrl, { method: 'POST', headers, body: form.toString() })
  const body = answer.json
  if (answer.status < 200 || answer.status >= 300 || typeof body?.access_token !== 'string' || !body.access_token) throw describeError(vendor, answer)
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(body)) {
    if (key !== 'access_token' && key !== 'refresh_token' && (typeof value === 'string' || typeof value === 'number')) fields[key] = String(value)
  }
  return { accessToken: body.access_token, ...(typeof body.refresh_token === 'string' && body.refresh_token ? { refreshToken: body.refresh_token } : {}), fields }
}

/** The authorization URL: the app's endpoint with the standard query (RFC 6749 §4.1.1) and PKCE's S256 challenge. */
export function authorizeUrl(app: ConnectApp, params: Record<string, string | undefined>): string {
  const url = new URL(app.authorizeUrl)
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value)
  return url.toString()
}

/** The standard query for a code flow with PKCE when `challenge` is given. */
export function standardAuthorize(app: ConnectApp, state: string, challenge: string | undefined, scope: string, extra: Record<string, string> = {}): string {
  return authorizeUrl(app, {
    response_type: 'code', client_id: app.clientId, redirect_uri: app.redirectUri, scope, state,
    ...(challenge ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}),
    ...extra,
  })
}

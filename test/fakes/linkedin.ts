/**
 * A fake LinkedIn: the OAuth token endpoint (`/oauth/v2/accessToken`, refresh_token grant) and the Conversions API
 * (`POST /rest/conversionEvents`, single CREATE or BATCH_CREATE). It checks what the real API checks (research §4.11:
 * bearer token, LinkedIn-Version, Rest.li 2.0.0, rule URN, millisecond time within 90 days, 64-hex SHA256_EMAIL,
 * amount as a string, at most 5,000 elements) and answers with LinkedIn's bodies: `{elements:[{status:201}…]}`, Rest.li
 * errors `{status, serviceErrorCode?, code?, message}`, and a 422 whose message names the bad rows
 * (`Index: 0, ERROR :: /path :: text`). Texts LinkedIn does not document (an unknown rule, an old event, an oversized
 * batch) are approximations; there the fake is stricter than LinkedIn may be, never looser.
 */
import { randomBytes } from 'node:crypto'
import { LINKEDIN_API_VERSION } from '../../adapters/ads/linkedin/version.ts'
import { bearer, isSha256Hex, parseJson, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface FakeRule { method: 'CONVERSIONS_API' | 'INSIGHT_TAG', campaigns: number }

export interface FakeLinkedInInit {
  /** A static token the API accepts, besides those the token endpoint issues. */
  accessToken?: string
  clientId?: string
  clientSecret?: string
  refreshToken?: string
  /** Scopes the token endpoint reports. */
  scope?: string
  /** Rule id → rule. Default: 101–104 (Conversions API, with campaigns) and 199 (Conversions API, no campaigns: the test rule). */
  rules?: Record<string, FakeRule>
  /** LinkedIn-Version values still served. */
  versions?: string[]
  /** The fake's clock, in ms, for the 90-day window. */
  now?: () => number
}

export interface RecordedConversion { element: Record<string, any>, ruleId: string, attributed: boolean }

export interface FakeLinkedIn extends FakeServer {
  /** The token endpoint, to pass as the adapter's oauthUrl. */
  oauthUrl: string
  accessToken: string
  credentials: { clientId: string, clientSecret: string, refreshToken: string }
  /** Conversion events LinkedIn recorded (never those of a refused request). */
  conversions: RecordedConversion[]
  /** Every token request's form fields. */
  tokenRequests: Record<string, string>[]
  /** Makes every access token the endpoint issued invalid, as a revocation would. */
  revokeTokens: () => void
}

export const MAX_ELEMENTS = 5000
const DAY_MS = 86_400_000
const FUTURE_SKEW_MS = 10 * 60_000
const ID_TYPES = new Set(['SHA256_EMAIL', 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', 'ACXIOM_ID', 'ORACLE_MOAT_ID'])
const ELEMENT_KEYS = new Set(['conversion', 'conversionHappenedAt', 'conversionValue', 'eventId', 'user'])
const USER_KEYS = new Set(['userIds', 'userInfo', 'externalIds', 'lead'])
const MISSING = 'field is required but not found and has no default value'

const restLi = (status: number, body: Record<string, unknown>, headers?: Record<string, string>): FakeReply => reply(status, { status, ...body }, headers)

/** LinkedIn's error bodies, to queue for failure scenarios. */
export const linkedInErrors = {
  emptyToken: (): FakeReply => restLi(401, { serviceErrorCode: 401, message: 'Empty oauth2_access_token' }),
  invalidToken: (): FakeReply => restLi(401, { serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN', message: 'Invalid access token' }),
  revokedToken: (): FakeReply => restLi(401, { serviceErrorCode: 65601, code: 'REVOKED_ACCESS_TOKEN', message: 'The token used in the request has been revoked by the user' }),
  expiredToken: (): FakeReply => restLi(401, { serviceErrorCode: 65602, code: 'EXPIRED_ACCESS_TOKEN', message: 'The token used in the request has expired' }),
  accessDenied: (): FakeReply => restLi(403, { serviceErrorCode: 100, code: 'ACCESS_DENIED', message: `Not enough permissions to access: conversionEvents.BATCH_CREATE.${LINKEDIN_API_VERSION}01` }),
  throttled: (): FakeReply => restLi(429, { serviceErrorCode: 101, code: 'TOO_MANY_REQUESTS', message: 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.' }),
  serverError: (): FakeReply => restLi(500, { code: 'INTERNAL_SERVER_ERROR', message: 'Internal Server Error' }),
  conflict: (): FakeReply => restLi(409, { code: 'CONFLICT', message: 'A write conflict occurred. Retry the request.' }),
  versionMissing: (): FakeReply => restLi(400, { code: 'VERSION_MISSING', message: 'A version must be present. Please specify a version by adding the LinkedIn-Version header.' }),
  versionInactive: (version: string): FakeReply => restLi(426, { code: 'NONEXISTENT_VERSION', message: `Requested version ${version} is not active` }),
  invalidRows: (rows: Map<number, string[]>): FakeReply => restLi(422, { message: [...rows].map(([index, errors]) => `Index: ${index}, ${errors.map((e) => `ERROR :: ${e}\n`).join('')}`).join('') }),
  wrongRules: (indices: number[], reason: string): FakeReply => restLi(400, { message: `Incorrect conversions information provided. ${reason}, indices [${indices.join(', ')}] (0-indexed)` }),
}

export async function startFakeLinkedIn(init: FakeLinkedInInit = {}): Promise<FakeLinkedIn> {
  const credentials = { clientId: init.clientId ?? '86fakeclientid', clientSecret: init.clientSecret ?? 'WPL_AP1.fake-secret', refreshToken: init.refreshToken ?? 'AQWfake-refresh-token' }
  const accessToken = init.accessToken ?? 'AQVfake-static-access-token'
  const rules: Record<string, FakeRule> = init.rules ?? Object.fromEntries([...['101', '102', '103', '104'].map((id) => [id, { method: 'CONVERSIONS_API', campaigns: 2 }]), ['199', { method: 'CONVERSIONS_API', campaigns: 0 }]])
  const versions = new Set(init.versions ?? [LINKEDIN_API_VERSION])
  const now = init.now ?? Date.now
  const issued = new Set<string>()
  const conversions: RecordedConversion[] = []
  const tokenRequests: Record<string, string>[] = []

  function token(request: RecordedRequest): FakeReply {
    const form = Object.fromEntries(new URLSearchParams(request.body))
    tokenRequests.push(form)
    const oauthError = (status: number, error: string, description: string): FakeReply => ({ status, body: { error, error_description: description } })
    if (request.method !== 'POST' || !String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return oauthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded')
    for (const field of ['grant_type', 'refresh_token', 'client_id', 'client_secret']) {
      if (!form[field]) return oauthError(400, 'invalid_request', `A required parameter "${field}" is missing`)
    }
    if (form.grant_type !== 'refresh_token') return oauthError(400, 'unsupported_grant_type', `Invalid grant type: ${form.grant_type}`)
    if (form.client_id !== credentials.clientId || form.client_secret !== credentials.clientSecret) return oauthError(401, 'invalid_client', 'Client authentication failed')
    if (form.refresh_token !== credentials.refreshToken) return oauthError(400, 'invalid_request', 'The provided authorization grant or refresh token is invalid, expired or revoked')
    const issuedToken = `AQV${randomBytes(24).toString('base64url')}`
    issued.add(issuedToken)
    return { status: 200, body: { access_token: issuedToken, expires_in: 5_183_999, refresh_token: credentials.refreshToken, refresh_token_expires_in: 31_103_999, scope: init.scope ?? 'r_ads,rw_conversions' } }
  }

  function conversionEvents(request: RecordedRequest): FakeReply {
    const token = bearer(request)
    if (!token) return linkedInErrors.emptyToken()
    if (token !== accessToken && !issued.has(token)) return linkedInErrors.invalidToken()
    const version = request.headers['linkedin-version']
    if (!version) return linkedInErrors.versionMissing()
    if (!versions.has(String(version))) return linkedInErrors.versionInactive(String(version))
    // Stricter than LinkedIn may be: the Conversions API documents the header as required on every call.
    if (request.headers['x-restli-protocol-version'] !== '2.0.0') return restLi(400, { message: 'X-Restli-Protocol-Version: 2.0.0 is required' })
    // JSON.parse never yields undefined: undefined means the body is not JSON.
    const body: any = parseJson(request.body)
    if (body === undefined) return restLi(400, { message: 'Invalid JSON in request body' })
    const batch = request.headers['x-restli-method'] === 'BATCH_CREATE'
    if (batch && !Array.isArray(body?.elements)) return linkedInErrors.invalidRows(new Map([[0, [`/elements :: ${MISSING}`]]]))
    const elements: Record<string, any>[] = batch ? body.elements : [body]
    if (elements.length === 0) return restLi(400, { message: 'Batch request must contain at least one element' })
    if (elements.length > MAX_ELEMENTS) return restLi(400, { message: `Batch size ${elements.length} exceeds the maximum batch size of ${MAX_ELEMENTS}` })

    const rows = new Map<number, string[]>()
    elements.forEach((element, index) => {
      const problems = checkElement(element, now())
      if (problems.length) rows.set(index, problems)
    })
    if (rows.size) return linkedInErrors.invalidRows(rows)
    const ruleIds = elements.map((e) => String(e.conversion).slice('urn:lla:llaPartnerConversion:'.length))
    const unknown = ruleIds.flatMap((id, i) => rules[id] ? [] : [i])
    if (unknown.length) return linkedInErrors.wrongRules(unknown, 'Conversion doesn\'t exist or doesn\'t belong to an ad account you can access')
    const notApi = ruleIds.flatMap((id, i) => rules[id]!.method === 'CONVERSIONS_API' ? [] : [i])
    if (notApi.length) return linkedInErrors.wrongRules(notApi, 'Conversion\'s method should be CONVERSIONS_API')

    elements.forEach((element, i) => conversions.push({ element, ruleId: ruleIds[i]!, attributed: rules[ruleIds[i]!]!.campaigns > 0 }))
    if (!batch) return { status: 201, body: '', headers: { 'x-restli-id': `${ruleIds[0]}-${Date.now()}` } }
    return { status: 200, body: { elements: elements.map(() => ({ status: 201 })) } }
  }

  const server = await startFakeServer((request) => {
    const path = request.path.split('?')[0]!
    if (path === '/oauth/v2/accessToken') return token(request)
    if (path === '/rest/conversionEvents' && request.method === 'POST') return conversionEvents(request)
    return restLi(404, { serviceErrorCode: 0, message: `Resource ${path.split('/').pop()} does not exist` })
  })
  return { ...server, oauthUrl: `${server.url}/oauth/v2/accessToken`, accessToken, credentials, conversions, tokenRequests, revokeTokens: () => issued.clear() }
}

/** The `ERROR :: /path :: text` lines LinkedIn's schema validation would report for one element. */
function checkElement(e: Record<string, any>, now: number): string[] {
  const problems: string[] = []
  const add = (path: string, text: string) => problems.push(`${path} :: ${text}`)
  for (const key of Object.keys(e)) if (!ELEMENT_KEYS.has(key)) add(`/${key}`, 'unrecognized field found but not allowed')
  if (e.conversion === undefined) add('/conversion', MISSING)
  else if (!/^urn:lla:llaPartnerConversion:\d+$/.test(String(e.conversion))) add('/conversion', `"${e.conversion}" is not a valid llaPartnerConversion URN`)
  const at = e.conversionHappenedAt
  if (at === undefined) add('/conversionHappenedAt', MISSING)
  else if (!Number.isSafeInteger(at) || String(at).length !== 13) add('/conversionHappenedAt', `${at} is not an epoch timestamp in milliseconds`)
  else if (at < now - 90 * DAY_MS) add('/conversionHappenedAt', 'conversion happened more than 90 days ago')
  else if (at > now + FUTURE_SKEW_MS) add('/conversionHappenedAt', 'conversion happened in the future')
  if (e.eventId !== undefined && (typeof e.eventId !== 'string' || e.eventId.length === 0 || e.eventId.length > 64)) add('/eventId', 'length must be between 1 and 64')
  if (e.conversionValue !== undefined) {
    if (e.conversionValue.amount === undefined) add('/conversionValue/amount', MISSING)
    else if (typeof e.conversionValue.amount !== 'string' || !/^\d+(\.\d+)?$/.test(e.conversionValue.amount)) add('/conversionValue/amount', 'must be a decimal string such as "50.0"')
    if (!/^[A-Z]{3}$/.test(String(e.conversionValue.currencyCode ?? ''))) add('/conversionValue/currencyCode', 'must be an ISO 4217 currency code')
  }
  const user = e.user
  if (!user) return [...problems, `/user :: ${MISSING}`]
  for (const key of Object.keys(user)) if (!USER_KEYS.has(key)) add(`/user/${key}`, 'unrecognized field found but not allowed')
  if (!Array.isArray(user.userIds)) add('/user/userIds', MISSING)
  for (const [i, id] of (Array.isArray(user.userIds) ? user.userIds : []).entries()) {
    if (!ID_TYPES.has(id?.idType)) add(`/user/userIds/${i}/idType`, `"${id?.idType}" is not an enum symbol`)
    else if (id.idType === 'SHA256_EMAIL' && !isSha256Hex(String(id.idValue))) add(`/user/userIds/${i}/idValue`, 'SHA256_EMAIL must be a SHA-256 hex digest')
    else if (typeof id.idValue !== 'string' || !id.idValue) add(`/user/userIds/${i}/idValue`, MISSING)
  }
  if (user.userInfo) for (const name of ['firstName', 'lastName']) if (!user.userInfo[name]) add(`/user/userInfo/${name}`, MISSING)
  if (Array.isArray(user.userIds) && user.userIds.length === 0 && !user.userInfo && !user.externalIds?.length) add('/user', 'at least one user identifier or userInfo is required')
  return problems
}

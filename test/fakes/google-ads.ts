/**
 * A fake Google: the OAuth token endpoint and ConversionUploadService.UploadClickConversions over REST, checking
 * what the real services check and answering with their bodies (google.rpc.Status with a GoogleAdsFailure).
 * Sources: conversion_upload_service.proto, conversion_upload_error.proto, partial_failure_error.proto (v22+),
 * Google's OAuth 2.0 token endpoint, and the Google Ads "common errors" guide. Where the real rule is not
 * documented (gclid together with gbraid/wbraid), the fake is stricter than Google may be, never looser.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { bearer, isSha256Hex, parseJson } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface FakeGoogleAdsInit {
  clientId?: string
  clientSecret?: string
  refreshToken?: string
  /** customer id → its conversion action ids (digits). */
  customers?: Record<string, string[]>
  /** When set, the customers are reached through this manager: uploads need `login-customer-id` with it. */
  managerId?: string
  /** Extra per-row verdicts Google reaches from its own data (an unknown click, a click under 6 hours old...). */
  rowError?: (conversion: Record<string, any>, index: number) => { code: Record<string, string>, message: string } | undefined
}

export interface RecordedConversion { customerId: string, conversion: Record<string, any> }

export interface FakeGoogleAds extends FakeServer {
  /** The token endpoint, to pass as the adapter's oauthUrl. */
  oauthUrl: string
  credentials: { clientId: string, clientSecret: string, refreshToken: string }
  /** Conversions Google recorded (not those of validateOnly calls, nor failed rows). */
  conversions: RecordedConversion[]
  /** Every token request's form fields. */
  tokenRequests: Record<string, string>[]
  /** Upload calls, parsed, with the headers that matter. */
  uploads: { customerId: string, version: string, headers: RecordedRequest['headers'], body: Record<string, any> }[]
  /** Makes an issued access token expire, as an hour passing would. */
  expireTokens: () => void
}

const MISSING_CREDENTIALS = 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'
const INVALID_CREDENTIALS = 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/

export async function startFakeGoogleAds(init: FakeGoogleAdsInit = {}): Promise<FakeGoogleAds> {
  const credentials = { clientId: init.clientId ?? 'fake-client.apps.googleusercontent.com', clientSecret: init.clientSecret ?? 'GOCSPX-fake-secret', refreshToken: init.refreshToken ?? '1//fake-refresh-token' }
  const customers = init.customers ?? { 1234567890: ['111', '222', '333', '444'] }
  const tokens = new Set<string>()
  const orderIds = new Set<string>()
  const conversions: RecordedConversion[] = []
  const tokenRequests: Record<string, string>[] = []
  const uploads: FakeGoogleAds['uploads'] = []

  function token(request: RecordedRequest): FakeReply {
    const form = Object.fromEntries(new URLSearchParams(request.body))
    tokenRequests.push(form)
    if (request.method !== 'POST' || !String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      return { status: 400, body: { error: 'invalid_request', error_description: 'Bad Request' } }
    }
    if (form.grant_type !== 'refresh_token') return { status: 400, body: { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${form.grant_type ?? ''}` } }
    if (form.client_id !== credentials.clientId) return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } }
    if (form.client_secret !== credentials.clientSecret) return { status: 401, body: { error: 'invalid_client', error_description: 'Unauthorized' } }
    if (form.refresh_token !== credentials.refreshToken) return { status: 400, body: { error: 'invalid_grant', error_description: 'Bad Request' } }
    const accessToken = `ya29.${randomBytes(24).toString('base64url')}`
    tokens.add(accessToken)
    return { status: 200, body: { access_token: accessToken, expires_in: 3599, scope: 'https://www.googleapis.com/auth/adwords', token_type: 'Bearer' } }
  }

  function upload(request: RecordedRequest, version: string, customerId: string): FakeReply {
    const failure = (code: number, status: string, message: string, errors: unknown[] = []) => ({
      status: code,
      body: { error: { code, message, status, details: errors.length ? [{ '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`, errors, requestId: randomUUID().slice(0, 22) }] : [] } },
    })
    const token = bearer(request)
    if (!token) return failure(401, 'UNAUTHENTICATED', MISSING_CREDENTIALS)
    if (!tokens.has(token)) return failure(401, 'UNAUTHENTICATED', INVALID_CREDENTIALS)
    // Developer tokens were sunset on 2026-09-09: the header is optional and Google ignores it, so the fake does too.
    if (!(customerId in customers)) {
      return failure(403, 'PERMISSION_DENIED', 'The caller does not have permission', [{ errorCode: { authorizationError: 'USER_PERMISSION_DENIED' }, message: 'User doesn\'t have permission to access customer. Note: If you\'re accessing a client customer, the manager\'s customer ID must be set in the \'login-customer-id\' header. See https://developers.google.com/google-ads/api/docs/concepts/call-structure#cid' }])
    }
    if (init.managerId && request.headers['login-customer-id'] !== init.managerId) {
      return failure(403, 'PERMISSION_DENIED', 'The caller does not have permission', [{ errorCode: { authorizationError: 'USER_PERMISSION_DENIED' }, message: 'User doesn\'t have permission to access customer. Note: If you\'re accessing a client customer, the manager\'s customer ID must be set in the \'login-customer-id\' header. See https://developers.google.com/google-ads/api/docs/concepts/call-structure#cid' }])
    }
    // JSON.parse never yields undefined: undefined means the body is not JSON.
    const body = parseJson(request.body) as Record<string, any> | undefined
    if (body === undefined) return failure(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.')
    uploads.push({ customerId, version, headers: request.headers, body })
    const invalid = (errorCode: Record<string, string>, message: string, field: string) => failure(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [{ errorCode, message, location: { fieldPathElements: [{ fieldName: field }] } }])
    if (body.partialFailure !== true) return invalid({ partialFailureError: 'PARTIAL_FAILURE_MODE_REQUIRED' }, 'The partial failure field was false in the request. This method requires this field be set to true.', 'partial_failure')
    if (!Array.isArray(body.conversions) || body.conversions.length === 0) return invalid({ fieldError: 'REQUIRED_NONEMPTY_LIST' }, 'The field must contain at least one element.', 'conversions')
    if (body.conversions.length > 2000) return invalid({ conversionUploadError: 'TOO_MANY_CONVERSIONS_IN_REQUEST' }, 'Upload fewer than 2001 events in a single request.', 'conversions')

    const seen = new Set<string>()
    const rowErrors: unknown[] = []
    const results = (body.conversions as Record<string, any>[]).map((conversion, index) => {
      const problems = checkRow(conversion, customers[customerId] ?? [], seen)
      const extra = problems.length ? undefined : init.rowError?.(conversion, index)
      if (extra) problems.push({ code: extra.code, message: extra.message, field: 'gclid' })
      if (problems.length) {
        rowErrors.push(...problems.map((p) => ({ errorCode: p.code, message: p.message, location: { fieldPathElements: [{ fieldName: 'conversions', index }, { fieldName: p.field }] } })))
        return {}
      }
      if (!body.validateOnly) {
        orderIds.add(orderKey(conversion))
        conversions.push({ customerId, conversion })
      }
      const { gclid, gbraid, wbraid, conversionAction, conversionDateTime, userIdentifiers } = conversion
      return { gclid, gbraid, wbraid, conversionAction, conversionDateTime, userIdentifiers }
    })
    const partialFailureError = rowErrors.length
      ? { code: 3, message: rowErrors.map((e: any) => `${e.message}, at conversions[${e.location.fieldPathElements[0].index}].${e.location.fieldPathElements[1].fieldName}`).join(', '), details: [{ '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`, errors: rowErrors, requestId: randomUUID().slice(0, 22) }] }
      : undefined
    // Results are not returned when validateOnly is true; failed rows get an empty result.
    return { status: 200, body: { ...(partialFailureError ? { partialFailureError } : {}), ...(body.validateOnly ? {} : { results }), jobId: String(2 ** 31 + Math.floor(Math.random() * 1e9)) } }
  }

  function checkRow(c: Record<string, any>, actions: string[], seen: Set<string>) {
    const problems: { code: Record<string, string>, message: string, field: string }[] = []
    const add = (code: Record<string, string>, message: string, field: string) => problems.push({ code, message, field })
    // Google validates the action id only; the customer id in the resource name is ignored.
    const action = /^customers\/\d+\/conversionActions\/(\d+)$/.exec(String(c.conversionAction ?? ''))?.[1]
    if (!c.conversionAction) add({ requestError: 'RESOURCE_NAME_MISSING' }, 'Resource name is missing.', 'conversion_action')
    else if (!action) add({ requestError: 'RESOURCE_NAME_MALFORMED' }, 'Resource name is malformed.', 'conversion_action')
    else if (!actions.includes(action)) add({ conversionUploadError: 'NO_CONVERSION_ACTION_FOUND' }, 'The conversion action specified in the upload request cannot be found. Make sure it\'s available in this account.', 'conversion_action')
    if (!DATE_TIME.test(String(c.conversionDateTime ?? ''))) add({ dateError: 'INVALID_STRING_DATE_TIME_SECONDS_WITH_OFFSET' }, 'The string date time\'s format should be yyyy-mm-dd hh:mm:ss+|-hh:mm.', 'conversion_date_time')
    if (c.gbraid && c.wbraid) add({ conversionUploadError: 'GBRAID_WBRAID_BOTH_SET' }, 'Can\'t use both gbraid and wbraid parameters. Use only 1 and try again.', 'wbraid')
    else if (c.gclid && (c.gbraid || c.wbraid)) add({ fieldError: 'VALUE_MUST_BE_UNSET' }, 'The field must not be set.', c.gbraid ? 'gbraid' : 'wbraid')
    const identifiers: Record<string, unknown>[] = Array.isArray(c.userIdentifiers) ? c.userIdentifiers : []
    if (!c.gclid && !c.gbraid && !c.wbraid && identifiers.length === 0) add({ fieldError: 'REQUIRED' }, 'The required field was not present.', 'gclid')
    if (identifiers.length > 5) add({ collectionSizeError: 'TOO_MANY' }, 'Too many elements.', 'user_identifiers')
    for (const identifier of identifiers) {
      const keys = Object.keys(identifier).filter((k) => k !== 'userIdentifierSource')
      if (keys.length !== 1 || !['hashedEmail', 'hashedPhoneNumber'].includes(keys[0]!)) add({ conversionUploadError: 'UNSUPPORTED_USER_IDENTIFIER' }, 'The provided user identifiers are not supported. Use only hashed email or phone number and try again.', 'user_identifiers')
      else if (!isSha256Hex(String(identifier[keys[0]!]))) add({ conversionUploadError: 'INVALID_USER_IDENTIFIER' }, 'Make sure you hash user provided data using SHA-256 and ensure you are normalizing according to the guidelines.', 'user_identifiers')
    }
    // The proto allows consent.adPersonalization only on OfflineUserDataJobService and UserDataService.
    if (c.consent?.adPersonalization !== undefined) add({ fieldError: 'VALUE_MUST_BE_UNSET' }, 'The field must not be set.', 'consent.ad_personalization')
    if (c.orderId !== undefined) {
      const key = orderKey(c)
      if (seen.has(key)) add({ conversionUploadError: 'DUPLICATE_ORDER_ID' }, 'Imported events include multiple conversions with the same order ID and were not processed. Make sure order IDs are unique and try again.', 'order_id')
      else if (orderIds.has(key)) add({ conversionUploadError: 'ORDER_ID_ALREADY_IN_USE' }, 'The imported event includes an order ID that was previously recorded, so the event was not processed.', 'order_id')
      seen.add(key)
    }
    return problems
  }

  const server = await startFakeServer((request) => {
    const path = request.path.split('?')[0]!
    if (path === '/token') return token(request)
    const route = /^\/(v\d+)\/customers\/(\d+):uploadClickConversions$/.exec(path)
    if (route && request.method === 'POST') return upload(request, route[1]!, route[2]!)
    return { status: 404, body: `<!DOCTYPE html><html lang=en><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins><p>The requested URL <code>${path}</code> was not found on this server. <ins>That’s all we know.</ins>`, headers: { 'content-type': 'text/html; charset=UTF-8' } }
  })
  return { ...server, oauthUrl: `${server.url}/token`, credentials, conversions, tokenRequests, uploads, expireTokens: () => tokens.clear() }
}

function orderKey(conversion: Record<string, any>): string {
  const action = /conversionActions\/(\d+)$/.exec(String(conversion.conversionAction))?.[1]
  return `${action}:${conversion.orderId}`
}

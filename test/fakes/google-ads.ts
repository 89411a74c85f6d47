/**
 * A fake Google: the OAuth token endpoint, the Data Manager API (`POST /v1/events:ingest`, `GET
 * /v1/requestStatus:retrieve`) and, for the legacy path, ConversionUploadService.UploadClickConversions over REST.
 * Each checks what the real service checks and answers with its bodies: google.rpc.Status with BadRequest field
 * violations, ErrorInfo and RequestInfo for the Data Manager API (fast-fail: one bad event refuses the request), with a
 * GoogleAdsFailure for click uploads. Sources: google/ads/datamanager/v1/*.proto, the Data Manager "Understand API
 * errors" and "Limits and quotas" pages, the BadRequest reference (JSON field paths such as `events[2].currency`);
 * conversion_upload_service.proto, conversion_upload_error.proto, partial_failure_error.proto (v22+); Google's OAuth
 * 2.0 token endpoint. Where the real rule is not documented (gclid with gbraid/wbraid; transactionId, which the REST
 * page calls required and the proto optional), the fake is stricter than Google may be, never looser.
 *
 * Refunds: through events:ingest, an event with a recorded transactionId restates the conversion's value (Data Manager
 * "Conversion adjustments" guide); through ConversionAdjustmentUploadService.UploadConversionAdjustments (conversion_adjustment_upload_service.proto
 * and conversion_adjustment_upload_error.proto, v26): RETRACTION and RESTATEMENT by order id, with partial failure.
 *
 * Both APIs write to the same account: `conversions` holds what the Google Ads account recorded, in its own
 * vocabulary (conversionAction, gclid, orderId…), whichever API brought it.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { bearer, isObject, isSha256Hex, parseJson } from './helpers.ts'
import { unknownToGoogle } from './google-protos.ts'
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
  /** Extra fast-fail verdicts on a Data Manager event (a check the fake does not model), as a field violation. */
  eventViolation?: (event: Record<string, any>, index: number) => Omit<FieldViolation, 'field'> & { field?: string } | undefined
  /**
   * What Google finds while processing a Data Manager event after answering `{requestId}` (a ProcessingErrorReason such
   * as PROCESSING_ERROR_REASON_EVENT_TOO_OLD): the event is not recorded, and requestStatus:retrieve reports it.
   */
  processingError?: (event: Record<string, any>) => string | undefined
  /** How many requestStatus:retrieve calls per request answer PROCESSING before the final status (default 0). */
  processingLooks?: number
  /** The scopes the refresh token was granted; default both Data Manager and Google Ads. */
  scopes?: string[]
}

export interface RecordedConversion {
  customerId: string
  api: 'data-manager' | 'upload-clicks'
  /** The conversion as the Google Ads account holds it (ClickConversion field names). */
  conversion: Record<string, any>
  /** The Data Manager event it came from. */
  event?: Record<string, any>
}
export interface FieldViolation { field: string, reason: string, description: string }

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
  /** events:ingest calls with a JSON body (valid or not), parsed, with their headers and the answer's status. */
  ingests: { headers: RecordedRequest['headers'], body: Record<string, any>, status: number }[]
  /** Adjustments Google applied, in order (not those of validateOnly calls, nor failed rows). */
  adjustments: { customerId: string, adjustment: Record<string, any> }[]
  /** Events:ingest events that restated a recorded conversion (same transactionId and action), with the value before. */
  restatements: { customerId: string, orderId: string, conversionAction: string, from: { value?: number, currency?: string }, event: Record<string, any> }[]
  /** UploadConversionAdjustments calls, parsed, with their headers. */
  adjustmentUploads: { customerId: string, headers: RecordedRequest['headers'], body: Record<string, any> }[]
  /** Makes an issued access token expire, as an hour passing would. */
  expireTokens: () => void
}

const MISSING_CREDENTIALS = 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'
const INVALID_CREDENTIALS = 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/
export const SCOPES = { dataManager: 'https://www.googleapis.com/auth/datamanager', adwords: 'https://www.googleapis.com/auth/adwords' } as const

export async function startFakeGoogleAds(init: FakeGoogleAdsInit = {}): Promise<FakeGoogleAds> {
  const credentials = { clientId: init.clientId ?? 'fake-client.apps.googleusercontent.com', clientSecret: init.clientSecret ?? 'GOCSPX-fake-secret', refreshToken: init.refreshToken ?? '1//fake-refresh-token' }
  const customers = init.customers ?? { 1234567890: ['111', '222', '333', '444'] }
  const scopes = init.scopes ?? [SCOPES.dataManager, SCOPES.adwords]
  const tokens = new Map<string, string[]>()
  const orderIds = new Set<string>()
  const conversions: RecordedConversion[] = []
  const tokenRequests: Record<string, string>[] = []
  const uploads: FakeGoogleAds['uploads'] = []
  const ingests: FakeGoogleAds['ingests'] = []
  const requestIds = new Map<string, { destinations: Record<string, any>[], events: Record<string, any>[], looks: number }>()
  const adjustments: FakeGoogleAds['adjustments'] = []
  const adjustmentUploads: FakeGoogleAds['adjustmentUploads'] = []
  const restatements: FakeGoogleAds['restatements'] = []
  const retracted = new Set<string>()

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
    tokens.set(accessToken, scopes)
    return { status: 200, body: { access_token: accessToken, expires_in: 3599, scope: scopes.join(' '), token_type: 'Bearer' } }
  }

  const adsFailure = (version: string) => (code: number, status: string, message: string, errors: unknown[] = []) => ({
    status: code,
    body: { error: { code, message, status, details: errors.length ? [{ '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`, errors, requestId: randomUUID().slice(0, 22) }] : [] } },
  })

  /** `GET /tokeninfo?access_token=…`: what Google says of a token it issued; 400 invalid_token for any other. */
  function tokenInfo(request: RecordedRequest): FakeReply {
    const token = new URL(request.path, 'http://fake.invalid').searchParams.get('access_token') ?? ''
    const granted = tokens.get(token)
    if (!granted) return { status: 400, body: { error: 'invalid_token', error_description: 'Invalid Value' } }
    return { status: 200, body: { azp: credentials.clientId, aud: credentials.clientId, scope: granted.join(' '), exp: String(Math.floor(Date.now() / 1000) + 3599), expires_in: '3599', access_type: 'offline' } }
  }

  /** The Google Ads API's checks before a body is read: token, scope, account access. Undefined when they pass. */
  function adsAccess(request: RecordedRequest, version: string, customerId: string, method: string): FakeReply | undefined {
    const failure = adsFailure(version)
    const token = bearer(request)
    if (!token) return failure(401, 'UNAUTHENTICATED', MISSING_CREDENTIALS)
    if (!tokens.has(token)) return failure(401, 'UNAUTHENTICATED', INVALID_CREDENTIALS)
    if (!tokens.get(token)!.includes(SCOPES.adwords)) return insufficientScope(`google.ads.googleads.v26.services.${method}`, 'googleads.googleapis.com')
    // Developer tokens were sunset on 2026-09-09: the header is optional and Google ignores it, so the fake does too.
    if (!(customerId in customers)) {
      return failure(403, 'PERMISSION_DENIED', 'The caller does not have permission', [{ errorCode: { authorizationError: 'USER_PERMISSION_DENIED' }, message: 'User doesn\'t have permission to access customer. Note: If you\'re accessing a client customer, the manager\'s customer ID must be set in the \'login-customer-id\' header. See https://developers.google.com/google-ads/api/docs/concepts/call-structure#cid' }])
    }
    if (init.managerId && request.headers['login-customer-id'] !== init.managerId) {
      return failure(403, 'PERMISSION_DENIED', 'The caller does not have permission', [{ errorCode: { authorizationError: 'USER_PERMISSION_DENIED' }, message: 'User doesn\'t have permission to access customer. Note: If you\'re accessing a client customer, the manager\'s customer ID must be set in the \'login-customer-id\' header. See https://developers.google.com/google-ads/api/docs/concepts/call-structure#cid' }])
    }
    return undefined
  }

  function upload(request: RecordedRequest, version: string, customerId: string): FakeReply {
    const failure = adsFailure(version)
    const refused = adsAccess(request, version, customerId, 'ConversionUploadService.UploadClickConversions')
    if (refused) return refused
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
        conversions.push({ customerId, api: 'upload-clicks', conversion })
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

  /** UploadConversionAdjustments: retract or restate a recorded conversion, found by action and order id. */
  function adjust(request: RecordedRequest, version: string, customerId: string): FakeReply {
    const failure = adsFailure(version)
    const refused = adsAccess(request, version, customerId, 'ConversionAdjustmentUploadService.UploadConversionAdjustments')
    if (refused) return refused
    const body = parseJson(request.body) as Record<string, any> | undefined
    if (!isObject(body)) return failure(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.')
    adjustmentUploads.push({ customerId, headers: request.headers, body })
    const invalid = (errorCode: Record<string, string>, message: string, field: string) => failure(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [{ errorCode, message, location: { fieldPathElements: [{ fieldName: field }] } }])
    if (body.partialFailure !== true) return invalid({ partialFailureError: 'PARTIAL_FAILURE_MODE_REQUIRED' }, 'The partial failure field was false in the request. This method requires this field be set to true.', 'partial_failure')
    const rows: unknown = body.conversionAdjustments
    if (!Array.isArray(rows) || rows.length === 0) return invalid({ fieldError: 'REQUIRED_NONEMPTY_LIST' }, 'The field must contain at least one element.', 'conversion_adjustments')
    if (rows.length > 2000) return invalid({ conversionAdjustmentUploadError: 'TOO_MANY_ADJUSTMENTS_IN_REQUEST' }, 'Too many adjustments in the request.', 'conversion_adjustments')
    const rowErrors: unknown[] = []
    const results = rows.map((row: Record<string, any>, index: number) => {
      const problem = checkAdjustment(row, customers[customerId] ?? [])
      if (problem) {
        rowErrors.push({ errorCode: problem.code, message: problem.message, location: { fieldPathElements: [{ fieldName: 'conversion_adjustments', index }, { fieldName: problem.field }] } })
        return {}
      }
      if (!body.validateOnly) {
        if (row.adjustmentType === 'RETRACTION') retracted.add(orderKey(row))
        adjustments.push({ customerId, adjustment: row })
      }
      const { conversionAction, adjustmentDateTime, adjustmentType, orderId } = row
      return { conversionAction, adjustmentDateTime, adjustmentType, orderId }
    })
    const partialFailureError = rowErrors.length
      ? { code: 3, message: rowErrors.map((e: any) => `${e.message}, at conversion_adjustments[${e.location.fieldPathElements[0].index}]`).join(', '), details: [{ '@type': `type.googleapis.com/google.ads.googleads.${version}.errors.GoogleAdsFailure`, errors: rowErrors, requestId: randomUUID().slice(0, 22) }] }
      : undefined
    return { status: 200, body: { ...(partialFailureError ? { partialFailureError } : {}), ...(body.validateOnly ? {} : { results }), jobId: 2 ** 31 - 1 - Math.floor(Math.random() * 1e9) } }
  }

  function checkAdjustment(row: Record<string, any>, actions: string[]): { code: Record<string, string>, message: string, field: string } | undefined {
    const error = (name: string, message: string, field: string) => ({ code: { conversionAdjustmentUploadError: name }, message, field })
    const action = /^customers\/\d+\/conversionActions\/(\d+)$/.exec(String(row.conversionAction ?? ''))?.[1]
    if (!action) return { code: { requestError: 'RESOURCE_NAME_MALFORMED' }, message: 'Resource name is malformed.', field: 'conversion_action' }
    if (!actions.includes(action)) return error('NO_CONVERSION_ACTION_FOUND', 'The conversion action specified in the adjustment request cannot be found. Make sure it\'s available in this account.', 'conversion_action')
    if (!['RETRACTION', 'RESTATEMENT'].includes(row.adjustmentType)) return { code: { fieldError: 'REQUIRED' }, message: 'The required field was not present.', field: 'adjustment_type' }
    if (!DATE_TIME.test(String(row.adjustmentDateTime ?? ''))) return { code: { dateError: 'INVALID_STRING_DATE_TIME_SECONDS_WITH_OFFSET' }, message: 'The string date time\'s format should be yyyy-mm-dd hh:mm:ss+|-hh:mm.', field: 'adjustment_date_time' }
    if (!row.orderId && !row.gclidDateTimePair) return { code: { fieldError: 'REQUIRED' }, message: 'The required field was not present.', field: 'order_id' }
    if (row.adjustmentType === 'RETRACTION' && row.restatementValue !== undefined) return { code: { fieldError: 'VALUE_MUST_BE_UNSET' }, message: 'The field must not be set.', field: 'restatement_value' }
    if (row.adjustmentType === 'RESTATEMENT' && typeof row.restatementValue?.adjustedValue !== 'number') return { code: { fieldError: 'REQUIRED' }, message: 'The required field was not present.', field: 'restatement_value.adjusted_value' }
    const recorded = conversions.find((c) => orderKey(c.conversion) === orderKey(row))
    if (!recorded) return error('CONVERSION_NOT_FOUND', 'The conversion for this conversion action and conversion identifier can\'t be found. Make sure your conversion identifiers are associated with the correct conversion action and try again.', 'order_id')
    if (retracted.has(orderKey(row))) return error('CONVERSION_ALREADY_RETRACTED', 'The conversion was already retracted. This adjustment was not processed.', 'order_id')
    if (timeOf(row.adjustmentDateTime) <= timeOf(recorded.conversion.conversionDateTime)) return error('ADJUSTMENT_PRECEDES_CONVERSION', 'Adjustment has an adjustment_date_time that occurred before the associated conversion. Make sure your adjustment_date_time is correct and try again.', 'adjustment_date_time')
    return undefined
  }

  /** `POST /v1/events:ingest`: auth, scope, JSON, structure (fast-fail), account access, then record or validate only. */
  function ingest(request: RecordedRequest): FakeReply {
    const token = bearer(request)
    if (!token) return rpcError(401, 'UNAUTHENTICATED', MISSING_CREDENTIALS)
    if (!tokens.has(token)) return rpcError(401, 'UNAUTHENTICATED', INVALID_CREDENTIALS)
    if (!tokens.get(token)!.includes(SCOPES.dataManager)) return insufficientScope('google.ads.datamanager.v1.IngestionService.IngestEvents', 'datamanager.googleapis.com')
    const body = parseJson(request.body) as Record<string, any> | undefined
    if (!isObject(body)) return rpcError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.')
    const answer = ingestChecked(body)
    ingests.push({ headers: request.headers, body, status: answer.status })
    return answer
  }

  function ingestChecked(body: Record<string, any>): FakeReply {
    const destinations: Record<string, any>[] = Array.isArray(body.destinations) ? body.destinations.filter(isObject) : []
    const events: Record<string, any>[] = Array.isArray(body.events) ? body.events : []
    const structural = [...unknownFields(body), ...checkDestinations(destinations, body.destinations), ...checkEventList(body.events)]
    if (structural.length) return invalidArgument(structural)

    // Access comes before the data: an account the caller cannot reach is refused whatever the events hold.
    for (const destination of destinations) {
      const account = String(destination.operatingAccount?.accountId ?? '')
      const login = destination.loginAccount?.accountId
      if (!(account in customers) || (init.managerId && login !== init.managerId) || (login !== undefined && !init.managerId && login !== account)) {
        return rpcError(403, 'PERMISSION_DENIED', 'The caller does not have permission', [errorInfo('PERMISSION_DENIED')])
      }
    }
    const references = new Map(destinations.map((d, i) => [String(d.reference ?? `#${i}`), d]))
    const violations = [
      ...destinations.flatMap((d, i) => (customers[String(d.operatingAccount.accountId)] ?? []).includes(String(d.productDestinationId))
        ? []
        : [violation(`destinations[${i}].productDestinationId`, 'INVALID_CONVERSION_ACTION_ID', 'The conversion action ID is not valid.')]),
      ...events.flatMap((event, index) => {
        const problems = checkEvent(event, index, references)
        const extra = problems.length || !isObject(event) ? undefined : init.eventViolation?.(event, index)
        return extra ? [...problems, { ...extra, field: `events[${index}]${extra.field ? `.${extra.field}` : ''}` }] : problems
      }),
    ]
    if (events.some((e) => isObject(e) && isObject(e.userData)) && body.encoding !== 'HEX' && body.encoding !== 'BASE64') {
      violations.push(violation('encoding', 'REQUIRED_FIELD_MISSING', 'Encoding is required for UserData uploads.'))
    }
    if (violations.length) return invalidArgument(violations)

    const requestId = randomUUID()
    if (!body.validateOnly) {
      requestIds.set(requestId, { destinations, events, looks: 0 })
      for (const event of events) {
        if (!init.processingError?.(event)) record(event, event.destinationReferences?.length ? event.destinationReferences.map((r: string) => references.get(r)!) : destinations)
      }
    }
    return { status: 200, body: { requestId } }
  }

  /** What the Google Ads account keeps of an ingested event: one conversion per action and transactionId. */
  function record(event: Record<string, any>, destinations: Record<string, any>[]) {
    for (const destination of destinations) {
      const customerId = String(destination.operatingAccount.accountId)
      const ad = event.adIdentifiers ?? {}
      const conversion = {
        conversionAction: `customers/${customerId}/conversionActions/${destination.productDestinationId}`,
        conversionDateTime: event.eventTimestamp,
        ...(ad.gclid ? { gclid: ad.gclid } : {}), ...(ad.gbraid ? { gbraid: ad.gbraid } : {}), ...(ad.wbraid ? { wbraid: ad.wbraid } : {}),
        ...(event.conversionValue !== undefined ? { conversionValue: event.conversionValue } : {}),
        ...(event.currency ? { currencyCode: event.currency } : {}),
        orderId: event.transactionId,
      }
      const key = orderKey(conversion)
      if (orderIds.has(key)) {
        restate(key, event)
        continue
      }
      orderIds.add(key)
      conversions.push({ customerId, api: 'data-manager', conversion, event })
    }
  }

  /**
   * An event whose transactionId the action already recorded is an adjustment: its conversionValue and currency
   * overwrite the recorded ones, the count stays, every other field is kept as first recorded (Data Manager
   * "Conversion adjustments" guide). Recorded in `restatements` when the value or currency changed.
   */
  function restate(key: string, event: Record<string, any>) {
    const recorded = conversions.find((c) => orderKey(c.conversion) === key)!
    const before = { value: recorded.conversion.conversionValue, currency: recorded.conversion.currencyCode }
    if (event.conversionValue !== undefined) recorded.conversion.conversionValue = event.conversionValue
    if (event.currency) recorded.conversion.currencyCode = event.currency
    if (before.value !== recorded.conversion.conversionValue || before.currency !== recorded.conversion.currencyCode) {
      restatements.push({ customerId: recorded.customerId, orderId: String(event.transactionId), conversionAction: recorded.conversion.conversionAction, from: before, event })
    }
  }

  /**
   * `GET /v1/requestStatus:retrieve?requestId=…`: one status per destination, in the request's order
   * (request_status_per_destination.proto): PROCESSING for the first `processingLooks` calls, then SUCCESS, FAILED
   * (every event of the destination failed) or PARTIAL_SUCCESS, with the error counts per reason.
   */
  function retrieve(request: RecordedRequest): FakeReply {
    const token = bearer(request)
    if (!token || !tokens.has(token)) return rpcError(401, 'UNAUTHENTICATED', token ? INVALID_CREDENTIALS : MISSING_CREDENTIALS)
    if (!tokens.get(token)!.includes(SCOPES.dataManager)) return insufficientScope('google.ads.datamanager.v1.IngestionService.RetrieveRequestStatus', 'datamanager.googleapis.com')
    const known = requestIds.get(new URLSearchParams(request.path.split('?')[1] ?? '').get('requestId') ?? '')
    if (!known) return invalidArgument([violation('requestId', 'INVALID_REQUEST_ID', 'The request ID is not valid. Status can only be retrieved for requests that succeed and are not validate-only.')])
    const processing = known.looks++ < (init.processingLooks ?? 0)
    return {
      status: 200,
      body: {
        requestStatusPerDestination: known.destinations.map((destination, index) => {
          const mine = known.events.filter((e) => (e.destinationReferences?.length ? e.destinationReferences.includes(String(destination.reference ?? `#${index}`)) : true))
          const reasons = mine.map((e) => init.processingError?.(e)).filter((r): r is string => Boolean(r))
          const counts = [...new Set(reasons)].map((reason) => ({ recordCount: String(reasons.filter((r) => r === reason).length), reason }))
          const requestStatus = processing ? 'PROCESSING' : reasons.length === 0 ? 'SUCCESS' : reasons.length === mine.length ? 'FAILED' : 'PARTIAL_SUCCESS'
          return { destination, requestStatus, ...(counts.length && !processing ? { errorInfo: { errorCounts: counts } } : {}), eventsIngestionStatus: { recordCount: String(mine.length) } }
        }),
      },
    }
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
    if (path === '/tokeninfo' && request.method === 'GET') return tokenInfo(request)
    const route = /^\/(v\d+)\/customers\/(\d+):uploadClickConversions$/.exec(path)
    if (route && request.method === 'POST') return upload(request, route[1]!, route[2]!)
    const adjustRoute = /^\/(v\d+)\/customers\/(\d+):uploadConversionAdjustments$/.exec(path)
    if (adjustRoute && request.method === 'POST') return adjust(request, adjustRoute[1]!, adjustRoute[2]!)
    if (path === '/v1/events:ingest' && request.method === 'POST') return ingest(request)
    if (path === '/v1/requestStatus:retrieve' && request.method === 'GET') return retrieve(request)
    return { status: 404, body: `<!DOCTYPE html><html lang=en><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins><p>The requested URL <code>${path}</code> was not found on this server. <ins>That’s all we know.</ins>`, headers: { 'content-type': 'text/html; charset=UTF-8' } }
  })
  return { ...server, oauthUrl: `${server.url}/token`, credentials, conversions, tokenRequests, uploads, ingests, adjustments, adjustmentUploads, restatements, expireTokens: () => tokens.clear() }
}

/** A conversion time in either API's format ("yyyy-mm-dd hh:mm:ss+hh:mm" or RFC 3339), in ms. */
function timeOf(text: string): number {
  return Date.parse(String(text).replace(' ', 'T'))
}

function orderKey(conversion: Record<string, any>): string {
  const action = /conversionActions\/(\d+)$/.exec(String(conversion.conversionAction))?.[1]
  return `${action}:${conversion.orderId}`
}

// --- Data Manager API checks (google/ads/datamanager/v1/*.proto; JSON names) ---

const DM_DOMAIN = 'datamanager.googleapis.com'
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/

function violation(field: string, reason: string, description: string): FieldViolation {
  return { field, reason, description }
}

/**
 * Google's JSON parser refuses a field or an enum value its message types do not have, naming where. The types are
 * the official client's (google-protos.ts), so the fake knows every field Google knows, and no other.
 */
function unknownFields(body: Record<string, any>): FieldViolation[] {
  return unknownToGoogle('IngestEventsRequest', body).map(({ field, description }) => violation(field, 'INVALID_ARGUMENT', description))
}

function checkDestinations(destinations: Record<string, any>[], raw: unknown): FieldViolation[] {
  if (!Array.isArray(raw) || raw.length === 0) return [violation('destinations', 'REQUIRED_FIELD_MISSING', 'At least one destination is required.')]
  if (raw.length > 10) return [violation('destinations', 'TOO_MANY_DESTINATIONS', 'Maximum number of destinations allowed per request is 10.')]
  const seen = new Set<string>()
  return destinations.flatMap((d, i) => {
    const at = `destinations[${i}]`
    const problems: FieldViolation[] = []
    for (const role of ['operatingAccount', 'loginAccount'] as const) {
      const account = d[role]
      if (account === undefined && role === 'loginAccount') continue
      if (!isObject(account) || !/^\d+$/.test(String(account.accountId ?? ''))) problems.push(violation(`${at}.${role}.accountId`, 'REQUIRED_FIELD_MISSING', 'The account ID is required.'))
      else if (account.accountType !== 'GOOGLE_ADS') problems.push(violation(`${at}.${role}.accountType`, 'INVALID_ENUM_VALUE', 'Enum value cannot be used.'))
    }
    if (!d.productDestinationId) problems.push(violation(`${at}.productDestinationId`, 'REQUIRED_FIELD_MISSING', 'The product destination ID is required.'))
    if (d.reference !== undefined && seen.has(String(d.reference))) problems.push(violation(`${at}.reference`, 'DUPLICATE_DESTINATION_REFERENCE', 'Two or more destinations in the request have the same reference.'))
    seen.add(String(d.reference))
    return problems
  })
}

function checkEventList(raw: unknown): FieldViolation[] {
  if (!Array.isArray(raw) || raw.length === 0) return [violation('events', 'REQUIRED_FIELD_MISSING', 'At least one event is required.')]
  if (raw.length > 2000) return [violation('events', 'TOO_MANY_EVENTS', 'At most 2000 events can be sent in a single request.')]
  return []
}

/** The fast-fail checks on one event; the paths are the JSON ones (`events[3].userData.userIdentifiers[0].emailAddress`). */
function checkEvent(event: unknown, index: number, references: Map<string, unknown>): FieldViolation[] {
  const at = `events[${index}]`
  if (!isObject(event)) return [violation(at, 'INVALID_EVENT', 'This event is not valid.')]
  const problems: FieldViolation[] = []
  const add = (field: string, reason: string, description: string) => problems.push(violation(`${at}${field ? `.${field}` : ''}`, reason, description))
  if (!event.eventTimestamp) add('eventTimestamp', 'REQUIRED_FIELD_MISSING', 'Required field is missing.')
  else if (!RFC3339.test(String(event.eventTimestamp))) add('eventTimestamp', 'INVALID_FORMAT', 'Format is invalid: use RFC 3339, such as "2014-10-02T15:01:23.045123456Z".')
  if (!event.transactionId) add('transactionId', 'REQUIRED_FIELD_MISSING', 'Required field is missing.')
  for (const reference of Array.isArray(event.destinationReferences) ? event.destinationReferences : []) {
    if (!references.has(String(reference))) add('destinationReferences', 'INVALID_DESTINATION', `No destination has the reference "${reference}".`)
  }
  if (!event.eventSource) add('eventSource', 'REQUIRED_FIELD_MISSING', 'Event source is required for offline conversions and enhanced conversions for leads.')
  if (event.currency !== undefined && !/^[A-Z]{3}$/.test(String(event.currency))) add('currency', 'INVALID_CURRENCY_CODE', 'The currency code is not supported.')
  if (event.conversionValue !== undefined && typeof event.conversionValue !== 'number') add('conversionValue', 'INVALID_NUMBER_FORMAT', 'Invalid number format.')
  const ad = isObject(event.adIdentifiers) ? event.adIdentifiers : {}
  if (ad.gbraid && ad.wbraid) add('adIdentifiers.wbraid', 'INVALID_ARGUMENT', 'Set at most one of gbraid and wbraid.')
  const identifiers: unknown[] = Array.isArray(event.userData?.userIdentifiers) ? event.userData.userIdentifiers : []
  if (isObject(event.userData) && identifiers.length === 0) add('userData.userIdentifiers', 'REQUIRED_FIELD_MISSING', 'At least one user identifier is required.')
  if (identifiers.length > 10) add('userData.userIdentifiers', 'TOO_MANY_USER_IDENTIFIERS', 'Maximum number of user identifiers allowed per record is 10.')
  identifiers.forEach((identifier, i) => {
    const keys = isObject(identifier) ? Object.keys(identifier) : []
    const field = `userData.userIdentifiers[${i}]`
    if (keys.length !== 1 || !['emailAddress', 'phoneNumber', 'address'].includes(keys[0]!)) add(field, 'INVALID_ARGUMENT', 'Exactly one of emailAddress, phoneNumber or address must be set.')
    else if (keys[0] !== 'address' && !/^[0-9a-fA-F]*$/.test(String((identifier as Record<string, unknown>)[keys[0]!]))) add(`${field}.${keys[0]}`, 'INVALID_HEX_ENCODING', 'The HEX encoded value is malformed.')
    else if (keys[0] !== 'address' && String((identifier as Record<string, unknown>)[keys[0]!]).length !== 64) add(`${field}.${keys[0]}`, 'INVALID_SHA256_FORMAT', 'The SHA256 encoded value is malformed.')
    else if (keys[0] === 'address') addressProblems((identifier as { address: unknown }).address).forEach(([name, message]) => add(`${field}.address.${name}`, 'INVALID_ARGUMENT', message))
  })
  const hasAdIdentifier = Boolean(ad.gclid || ad.gbraid || ad.wbraid || ad.sessionAttributes || ad.landingPageDeviceInfo)
  if (!hasAdIdentifier && identifiers.length === 0) add('', 'NO_IDENTIFIERS_PROVIDED', 'Events data contains no user identifiers or ad identifiers.')
  return problems
}

function errorInfo(reason: string, domain = DM_DOMAIN, metadata?: Record<string, string>) {
  return { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain, ...(metadata ? { metadata } : {}) }
}

/** The standard Google error body, with a RequestInfo naming the request for support. */
/** AddressInfo (read 2026-11-28): givenName and familyName SHA-256, regionCode ISO 3166-1 alpha-2 and postalCode in clear, all required. */
function addressProblems(address: unknown): [string, string][] {
  const a = isObject(address) ? address as Record<string, unknown> : {}
  return [
    ...(['givenName', 'familyName'] as const).filter((name) => !/^[0-9a-f]{64}$/i.test(String(a[name] ?? ''))).map((name): [string, string] => [name, 'Required; hashed as SHA-256.']),
    ...(/^[A-Z]{2}$/.test(String(a.regionCode ?? '')) ? [] : [['regionCode', 'Required; the 2-letter ISO-3166-1 alpha-2 region code.'] as [string, string]]),
    ...(typeof a.postalCode === 'string' && a.postalCode.trim() ? [] : [['postalCode', 'Required; the postal code of the user\'s address.'] as [string, string]]),
  ]
}

function rpcError(code: number, status: string, message: string, details: unknown[] = []): FakeReply {
  return { status: code, body: { error: { code, message, status, details: [...details, { '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: randomUUID() }] } } }
}

function invalidArgument(violations: FieldViolation[]): FakeReply {
  return rpcError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations }, errorInfo('INVALID_ARGUMENT')])
}

/**
 * What Google answers a token minted without the API's scope, on every googleapis.com API alike: 403
 * PERMISSION_DENIED with only an ErrorInfo ACCESS_TOKEN_SCOPE_INSUFFICIENT naming the method and service (the body
 * quoted in PipedreamHQ/pipedream#15060 for analyticsdata.googleapis.com; no RequestInfo).
 */
function insufficientScope(method: string, service: string): FakeReply {
  return { status: 403, body: { error: { code: 403, message: 'Request had insufficient authentication scopes.', status: 'PERMISSION_DENIED', details: [errorInfo('ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'googleapis.com', { method, service })] } } }
}

/**
 * A fake Salesforce: the OAuth 2.0 token endpoint (refresh-token grant) and the REST query resource over a small Lead
 * table the tests change. It checks what Salesforce checks and answers with its bodies:
 * - token: form-encoded `grant_type=refresh_token`, the Consumer Key and Secret, the refresh token; answers
 *   `{ access_token, instance_url, id, token_type, issued_at, signature, scope }` (no lifetime), or 400
 *   `{ error: invalid_grant | invalid_client_id | invalid_client | unsupported_grant_type, error_description }`
 *   (REST API guide, "OAuth Refresh Token Flow");
 * - query: `Authorization: Bearer`; an unknown or expired session → 401 `[{ message: "Session expired or invalid",
 *   errorCode: "INVALID_SESSION_ID" }]`; the SOQL is parsed (the subset the poller may send: SELECT fields FROM Lead
 *   WHERE conditions joined by AND, ORDER BY, LIMIT) and refused like Salesforce does: MALFORMED_QUERY, INVALID_FIELD
 *   for an unknown column or a quoted datetime, INVALID_TYPE for another object;
 * - paging: `Sforce-Query-Options: batchSize=N` (200–2,000, default 2,000), `{ totalSize, done, nextRecordsUrl,
 *   records }` with `attributes` on every record and dates as `2026-03-02T10:45:00.000+0000`;
 * - refresh-token rotation (`rotate: true`, the app's "Enable Refresh Token Rotation"): each refresh answers a new
 *   `refresh_token` and invalidates the one sent; a rotated-out token is refused with invalid_grant "expired
 *   access/refresh token", and its reuse revokes the chain's current token and sessions (Salesforce Help, "OAuth 2.0
 *   Refresh Token Flow for Renewed Sessions", and knowledge article 005316711);
 * - limits: every answer carries `Sforce-Limit-Info: api-usage=n/15000`; over the allocation → 403
 *   `[{ message: "TotalRequests Limit exceeded.", errorCode: "REQUEST_LIMIT_EXCEEDED" }]` (restforce#567, OrgCheck#181).
 */
import { randomBytes } from 'node:crypto'
import { SALESFORCE_API_VERSION } from '../../adapters/crm/salesforce/version.ts'
import { bearer, reply } from './helpers.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from './server.ts'

export interface FakeSalesforceInit {
  clientId?: string
  /** When set, the token endpoint requires it (the connected app's "Require Secret for Refresh Token Flow"). */
  clientSecret?: string
  refreshToken?: string
  /** A path the login host is served under, to tell login and instance requests apart (real hosts differ). */
  loginPath?: string
  /** Refresh-token rotation: every refresh answers a new refresh token and retires the one sent. */
  rotate?: boolean
}

export interface LeadInit {
  email?: string | null
  status: string
  at: Date
}

export interface FakeSalesforce extends FakeServer {
  credentials: { clientId: string, clientSecret: string | undefined, refreshToken: string }
  /** The login host (loginUrl) and the instance_url the token endpoint hands out. */
  loginUrl: string
  instanceUrl: string
  /** Token requests' form fields, and every SOQL received. */
  tokenRequests: Record<string, string>[]
  queries: { soql: string, batchSize: string | undefined }[]
  /** Query and queryMore requests answered. */
  dataRequests: () => number
  addLead: (init: LeadInit) => string
  updateLead: (id: string, changes: { status?: string }, at: Date) => void
  /** Every access token stops working, as a session timeout would. */
  expireSessions: () => void
  /** A user authorizes the app again (web-server flow): a new refresh token, starting a chain of its own. */
  authorize: () => string
  /** The refresh tokens that work now (one per chain). */
  validRefreshTokens: () => string[]
  throttleNext: () => void
  delay: (ms: number) => void
}

const LEAD_FIELDS = ['Id', 'Email', 'Status', 'FirstName', 'LastName', 'Company', 'IsConverted', 'IsDeleted', 'LastModifiedDate', 'SystemModstamp', 'CreatedDate']
const DATETIME_FIELDS = new Set(['LastModifiedDate', 'SystemModstamp', 'CreatedDate'])
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/
const API_LIMIT = 15_000

const errors = (status: number, errorCode: string, message: string): FakeReply => reply(status, [{ message, errorCode }])

/** Salesforce's answers, to queue for failure scenarios. */
export const salesforceErrors = {
  invalidSession: (): FakeReply => errors(401, 'INVALID_SESSION_ID', 'Session expired or invalid'),
  totalRequests: (): FakeReply => ({ ...errors(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.'), headers: { 'Sforce-Limit-Info': `api-usage=${API_LIMIT + 1}/${API_LIMIT}` } }),
  malformed: (message: string): FakeReply => errors(400, 'MALFORMED_QUERY', message),
}

const sfDate = (at: Date) => at.toISOString().replace('Z', '+0000')

export async function startFakeSalesforce(init: FakeSalesforceInit = {}): Promise<FakeSalesforce> {
  const credentials = { clientId: init.clientId ?? '3MVG9fakeConsumerKey.fake', clientSecret: init.clientSecret, refreshToken: init.refreshToken ?? '5Aep861fakeRefreshToken' }
  const loginPath = init.loginPath ?? ''
  const sessions = new Set<string>()
  /** Each chain's current refresh token, and every token ever issued → its chain. */
  const current = new Map<number, string>([[0, credentials.refreshToken]])
  const chainOf = new Map<string, number>([[credentials.refreshToken, 0]])
  const sessionChain = new Map<string, number>()
  const leads = new Map<string, Record<string, any>>()
  const locators = new Map<string, { records: Record<string, any>[], batch: number }>()
  const tokenRequests: Record<string, string>[] = []
  const queries: FakeSalesforce['queries'] = []
  let answered = 0
  let used = 0
  let throttled = 0
  let delayMs = 0
  let nextLead = 1
  let url = ''

  function token(request: RecordedRequest): FakeReply {
    const form = Object.fromEntries(new URLSearchParams(request.body))
    tokenRequests.push(form)
    if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) return reply(400, { error: 'invalid_request', error_description: 'invalid content type' })
    if (form.grant_type !== 'refresh_token') return reply(400, { error: 'unsupported_grant_type', error_description: 'grant type not supported' })
    if (form.client_id !== credentials.clientId) return reply(400, { error: 'invalid_client_id', error_description: 'client identifier invalid' })
    if (credentials.clientSecret && form.client_secret !== credentials.clientSecret) return reply(400, { error: 'invalid_client', error_description: 'invalid client credentials' })
    const chain = chainOf.get(form.refresh_token ?? '')
    if (chain === undefined || current.get(chain) !== form.refresh_token) {
      // A rotated-out token used again: Salesforce revokes the chain's current token and its sessions.
      if (chain !== undefined) revoke(chain)
      return reply(400, { error: 'invalid_grant', error_description: 'expired access/refresh token' })
    }
    const accessToken = `00D5g000004FAKE!AQ0A${randomBytes(24).toString('base64url')}`
    sessions.add(accessToken)
    sessionChain.set(accessToken, chain)
    const rotated = init.rotate ? issue(chain) : undefined
    return reply(200, {
      access_token: accessToken, ...(rotated ? { refresh_token: rotated } : {}), signature: randomBytes(32).toString('base64'), scope: 'refresh_token api', instance_url: url,
      id: 'https://login.salesforce.com/id/00D5g000004FAKEEA2/0055g00000FAKEAAA', token_type: 'Bearer', issued_at: String(Date.now()),
    })
  }

  function issue(chain: number): string {
    const token = `5Aep861${randomBytes(32).toString('base64url')}`
    current.set(chain, token)
    chainOf.set(token, chain)
    return token
  }

  function revoke(chain: number): void {
    current.delete(chain)
    for (const [session, owner] of sessionChain) {
      if (owner === chain) sessions.delete(session)
    }
  }

  async function data(request: RecordedRequest, path: string): Promise<FakeReply> {
    const session = bearer(request)
    if (!session || !sessions.has(session)) return salesforceErrors.invalidSession()
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    answered++
    if (throttled > 0) {
      throttled--
      return salesforceErrors.totalRequests()
    }
    used++
    const limitInfo = { 'Sforce-Limit-Info': `api-usage=${used}/${API_LIMIT}` }
    const more = new RegExp(`^/services/data/${SALESFORCE_API_VERSION.replace('.', '\\.')}/query/(01g[A-Za-z0-9]+)-(\\d+)$`).exec(path)
    if (more) {
      const locator = locators.get(more[1]!)
      if (!locator) return errors(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator')
      return reply(200, batch(more[1]!, locator, Number(more[2])), limitInfo)
    }
    if (path !== `/services/data/${SALESFORCE_API_VERSION}/query`) return errors(404, 'NOT_FOUND', 'The requested resource does not exist')
    const soql = new URL(request.path, 'http://fake').searchParams.get('q') ?? ''
    const batchSize = /batchSize=(\d+)/.exec(String(request.headers['sforce-query-options'] ?? ''))?.[1]
    queries.push({ soql, batchSize })
    const result = runSoql(soql, [...leads.values()])
    if ('status' in result) return result
    const id = `01g${randomBytes(9).toString('hex')}`
    const locator = { records: result.records, batch: Math.min(2000, Math.max(200, Number(batchSize ?? 2000))) }
    locators.set(id, locator)
    return reply(200, batch(id, locator, 0), limitInfo)
  }

  function batch(id: string, locator: { records: Record<string, any>[], batch: number }, start: number) {
    const records = locator.records.slice(start, start + locator.batch)
    const done = start + locator.batch >= locator.records.length
    return { totalSize: locator.records.length, done, ...(done ? {} : { nextRecordsUrl: `/services/data/${SALESFORCE_API_VERSION}/query/${id}-${start + locator.batch}` }), records }
  }

  const server = await startFakeServer(async (request) => {
    const path = request.path.split('?')[0]!
    if (request.method === 'POST' && path === `${loginPath}/services/oauth2/token`) return token(request)
    if (request.method === 'GET' && path.startsWith('/services/data/')) return data(request, path)
    return errors(404, 'NOT_FOUND', 'The requested resource does not exist')
  })
  url = server.url

  return {
    ...server,
    credentials,
    loginUrl: `${server.url}${loginPath}`,
    instanceUrl: server.url,
    tokenRequests,
    queries,
    dataRequests: () => answered,
    addLead: ({ email, status, at }) => {
      const id = `00Q5g00000${String(nextLead++).padStart(8, '0')}`
      leads.set(id, { Id: id, Email: email ?? null, Status: status, FirstName: null, LastName: 'Fake', Company: 'Fake Inc.', IsConverted: false, IsDeleted: false, CreatedDate: sfDate(at), LastModifiedDate: sfDate(at), SystemModstamp: sfDate(at) })
      return id
    },
    updateLead: (id, changes, at) => {
      const lead = leads.get(id)!
      if (changes.status !== undefined) lead.Status = changes.status
      lead.LastModifiedDate = sfDate(at)
      lead.SystemModstamp = sfDate(at)
    },
    expireSessions: () => sessions.clear(),
    authorize: () => issue(Math.max(...chainOf.values()) + 1),
    validRefreshTokens: () => [...current.values()],
    throttleNext: () => void throttled++,
    delay: (ms) => void (delayMs = ms),
  }
}

// --- a SOQL subset: enough to check what the poller sends, strict about the rest ---

type Token = { kind: 'word' | 'string' | 'op' | 'punct' | 'datetime' | 'number', text: string, value?: string }
type Condition = { field: string, op: string, values: Token[] }

function runSoql(soql: string, rows: Record<string, any>[]): FakeReply | { records: Record<string, any>[] } {
  const select = /^\s*SELECT\s+(.+?)\s+FROM\s+(\w+)(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+(.+?))?(?:\s+LIMIT\s+(\d+))?\s*$/is.exec(soql)
  if (!select) return salesforceErrors.malformed(`\n${soql}\n^\nERROR at Row:1:Column:1\nunexpected token: '${soql.trim().split(/\s+/)[0] ?? ''}'`)
  const [, fieldList, object, where, orderBy, limit] = select
  if (object !== 'Lead') return errors(400, 'INVALID_TYPE', `\n${soql}\nERROR at Row:1:Column:1\nsObject type '${object}' is not supported.`)
  const fields = fieldList!.split(',').map((field) => field.trim())
  const unknown = [...fields, ...(orderBy ?? '').split(',').map((part) => part.trim().split(/\s+/)[0] ?? '')].find((field) => field && !LEAD_FIELDS.includes(field))
  if (unknown) return errors(400, 'INVALID_FIELD', `\n${soql}\nERROR at Row:1:Column:1\nNo such column '${unknown}' on entity 'Lead'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name. Please reference your WSDL or the describe call for the appropriate names.`)
  const conditions = where ? parseWhere(where, soql) : []
  if (!Array.isArray(conditions)) return conditions
  let records = rows.filter((row) => !row.IsDeleted && conditions.every((condition) => holds(row, condition)))
  for (const part of (orderBy ?? '').split(',').map((text) => text.trim()).filter(Boolean).reverse()) {
    const [field, direction] = part.split(/\s+/)
    const sign = direction?.toUpperCase() === 'DESC' ? -1 : 1
    records = [...records].sort((a, b) => sign * compare(a[field!], b[field!], DATETIME_FIELDS.has(field!)))
  }
  if (limit) records = records.slice(0, Number(limit))
  return { records: records.map((row) => ({ attributes: { type: 'Lead', url: `/services/data/${SALESFORCE_API_VERSION}/sobjects/Lead/${row.Id}` }, ...Object.fromEntries(fields.map((field) => [field, row[field]])) })) }
}

function parseWhere(where: string, soql: string): Condition[] | FakeReply {
  const tokens = tokenize(where)
  if (!tokens) return salesforceErrors.malformed(`\n${soql}\nERROR at Row:1:Column:1\nline 1:1 no viable alternative at character '''`)
  const conditions: Condition[] = []
  let at = 0
  const malformed = (token?: Token) => salesforceErrors.malformed(`\n${soql}\nERROR at Row:1:Column:1\nunexpected token: '${token?.text ?? '<EOF>'}'`)
  while (at < tokens.length) {
    const field = tokens[at++]
    if (field?.kind !== 'word' || !LEAD_FIELDS.includes(field.text)) return field?.kind === 'word' ? errors(400, 'INVALID_FIELD', `\n${soql}\nERROR at Row:1:Column:1\nNo such column '${field.text}' on entity 'Lead'.`) : malformed(field)
    const op = tokens[at++]
    if (op?.kind === 'word' && op.text.toUpperCase() === 'IN') {
      if (tokens[at++]?.text !== '(') return malformed(tokens[at - 1])
      const values: Token[] = []
      for (;;) {
        const value = tokens[at++]
        if (value?.kind !== 'string') return malformed(value)
        values.push(value)
        const next = tokens[at++]
        if (next?.text === ')') break
        if (next?.text !== ',') return malformed(next)
      }
      conditions.push({ field: field.text, op: 'IN', values })
    }
    else if (op?.kind === 'op') {
      const value = tokens[at++]
      if (!value || value.kind === 'punct' || value.kind === 'op') return malformed(value)
      if (DATETIME_FIELDS.has(field.text) && value.kind === 'string') return errors(400, 'INVALID_FIELD', `\n${soql}\nERROR at Row:1:Column:1\nvalue of filter criterion for field '${field.text}' must be of type dateTime and should not be enclosed in quotes`)
      if (DATETIME_FIELDS.has(field.text) && value.kind !== 'datetime') return malformed(value)
      if (!DATETIME_FIELDS.has(field.text) && value.kind === 'datetime') return malformed(value)
      conditions.push({ field: field.text, op: op.text, values: [value] })
    }
    else return malformed(op)
    if (at < tokens.length && tokens[at++]?.text.toUpperCase() !== 'AND') return malformed(tokens[at - 1])
  }
  return conditions
}

const SOQL_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '"': '"', '\'': '\'', '\\': '\\' }

function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = []
  let at = 0
  while (at < text.length) {
    const rest = text.slice(at)
    const space = /^\s+/.exec(rest)
    if (space) {
      at += space[0].length
      continue
    }
    if (rest[0] === '\'') {
      let value = ''
      let index = 1
      for (; index < rest.length && rest[index] !== '\''; index++) {
        if (rest[index] === '\\') {
          const escaped = SOQL_ESCAPES[rest[index + 1] ?? '']
          if (escaped === undefined) return undefined
          value += escaped
          index++
        }
        else value += rest[index]
      }
      if (rest[index] !== '\'') return undefined
      tokens.push({ kind: 'string', text: rest.slice(0, index + 1), value })
      at += index + 1
      continue
    }
    const match = /^\d{4}-\d{2}-\d{2}T[0-9:.]+(?:Z|[+-]\d{2}:\d{2})/.exec(rest) ?? /^(!=|<=|>=|=|<|>)/.exec(rest) ?? /^[(),]/.exec(rest) ?? /^\d+(\.\d+)?/.exec(rest) ?? /^\w+/.exec(rest)
    if (!match) return undefined
    const word = match[0]
    const kind = DATETIME.test(word) ? 'datetime' : /^(!=|<=|>=|=|<|>)$/.test(word) ? 'op' : /^[(),]$/.test(word) ? 'punct' : /^\d/.test(word) ? 'number' : 'word'
    if (/^\d{4}-/.test(word) && kind !== 'datetime') return undefined
    tokens.push({ kind, text: word })
    at += word.length
  }
  return tokens
}

function literal(token: Token): unknown {
  if (token.kind === 'string') return token.value
  if (token.kind === 'datetime') return Date.parse(token.text)
  if (token.kind === 'number') return Number(token.text)
  const word = token.text.toLowerCase()
  return word === 'null' ? null : word === 'true' ? true : word === 'false' ? false : token.text
}

function holds(row: Record<string, any>, condition: Condition): boolean {
  const isDate = DATETIME_FIELDS.has(condition.field)
  const actual = isDate ? Date.parse(String(row[condition.field]).replace(/(\d{2})(\d{2})$/, '$1:$2')) : row[condition.field]
  // Text comparisons in SOQL are case-insensitive.
  if (condition.op === 'IN') return condition.values.some((value) => compare(literal(value), actual, false) === 0)
  const expected = literal(condition.values[0]!)
  if (expected === null) return condition.op === '=' ? actual === null : condition.op === '!=' ? actual !== null : false
  if (actual === null || actual === undefined) return condition.op === '!='
  const order = compare(actual, expected, false)
  switch (condition.op) {
    case '=': return order === 0
    case '!=': return order !== 0
    case '<': return order < 0
    case '<=': return order <= 0
    case '>': return order > 0
    case '>=': return order >= 0
  }
  return false
}

function compare(a: unknown, b: unknown, dates: boolean): number {
  if (dates) return Date.parse(String(a).replace(/(\d{2})(\d{2})$/, '$1:$2')) - Date.parse(String(b).replace(/(\d{2})(\d{2})$/, '$1:$2'))
  if (typeof a === 'number' && typeof b === 'number') return a - b
  return String(a).toLowerCase().localeCompare(String(b).toLowerCase())
}

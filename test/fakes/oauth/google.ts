/**
 * A fake Google for the Connect flow: Google's OAuth endpoints (accounts.google.com/o/oauth2/v2/auth,
 * oauth2.googleapis.com/token and /revoke, the latter answering 200 with an empty body, 400 `invalid_token` for an
 * unknown token) and the two Google Ads API calls the listing makes: customers:listAccessibleCustomers
 * (`{ resourceNames: ["customers/…"] }`) and googleAds:search for the customer's name and its conversion actions, with
 * google.rpc.Status errors (401 UNAUTHENTICATED, 403 PERMISSION_DENIED).
 */
import { startFakeServer, type FakeServer } from '../server.ts'
import { createAuthorizationServer, type AuthorizationServer } from './authorization-server.ts'

export interface FakeGoogleConnectInit {
  clientId: string
  clientSecret: string
  redirectUri: string
  /** customer id → its name and enabled conversion actions. */
  customers: Record<string, { name: string, actions: Record<string, string> }>
  /** The refresh token consent issues (default: a new random one each time). */
  refreshToken?: string
}

export interface FakeGoogleConnect extends FakeServer {
  auth: AuthorizationServer
}

const status = (code: number, state: string, message: string) => ({ status: code, body: { error: { code, message, status: state } } })

export async function startFakeGoogleConnect(init: FakeGoogleConnectInit): Promise<FakeGoogleConnect> {
  const auth = createAuthorizationServer({
    clientId: init.clientId, clientSecret: init.clientSecret, redirectUris: [init.redirectUri], authorizePath: '/o/oauth2/v2/auth', tokenPath: '/token', refreshToken: init.refreshToken,
  })
  const server = await startFakeServer((request) => {
    const answered = auth.handle(request)
    if (answered) return answered
    const url = new URL(request.path, 'http://fake')
    if (request.method === 'POST' && url.pathname === '/revoke') {
      const token = new URLSearchParams(request.body).get('token') ?? ''
      return auth.revoke(token) ? { status: 200, body: '' } : { status: 400, body: { error: 'invalid_token', error_description: 'Token expired or revoked' } }
    }
    const token = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1]
    if (!token || !auth.isLive(token)) return status(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.')
    if (request.method === 'GET' && url.pathname === '/v26/customers:listAccessibleCustomers') {
      return { status: 200, body: { resourceNames: Object.keys(init.customers).map((id) => `customers/${id}`) } }
    }
    const search = /^\/v26\/customers\/(\d+)\/googleAds:search$/.exec(url.pathname)
    if (request.method === 'POST' && search) {
      const customer = init.customers[search[1]!]
      if (!customer) return status(403, 'PERMISSION_DENIED', 'The caller does not have permission')
      const query = String(JSON.parse(request.body || '{}').query ?? '')
      if (/FROM customer$/.test(query)) return { status: 200, body: { results: [{ customer: { resourceName: `customers/${search[1]}`, id: search[1], descriptiveName: customer.name } }] } }
      if (/FROM conversion_action/.test(query)) {
        return { status: 200, body: { results: Object.entries(customer.actions).map(([id, name]) => ({ conversionAction: { resourceName: `customers/${search[1]}/conversionActions/${id}`, id, name, status: 'ENABLED' } })) } }
      }
      return status(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.')
    }
    return status(404, 'NOT_FOUND', 'Not found')
  })
  return { ...server, auth }
}

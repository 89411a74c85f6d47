/** Fakes for Pinterest, Salesforce, HubSpot and Meta's Connect calls (see vendors.ts). */
import type { FakeReply, RecordedRequest } from '../server.ts'
import { startFakeServer } from '../server.ts'
import { createAuthorizationServer } from './authorization-server.ts'

const bearerOf = (request: RecordedRequest) => /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1]
const ok = (body: unknown): FakeReply => ({ status: 200, body })
type App = { clientId: string, clientSecret: string, redirectUri: string }

/** Pinterest v5: client authentication by HTTP Basic only, ad_accounts as `{ items, bookmark }`. */
export async function startFakePinterest(app: App) {
  const auth = createAuthorizationServer({ ...app, redirectUris: [app.redirectUri], authorizePath: '/oauth/', tokenPath: '/v5/oauth/token' })
  const server = await startFakeServer((request) => {
    if (request.path.startsWith('/v5/oauth/token') && !String(request.headers.authorization ?? '').startsWith('Basic ')) return { status: 401, body: { code: 2, message: 'Authentication failed.' } }
    const answered = auth.handle(request)
    if (answered) return answered
    if (!auth.isLive(bearerOf(request) ?? '')) return { status: 401, body: { code: 2, message: 'Authentication failed.' } }
    if (request.path.startsWith('/v5/ad_accounts')) return ok({ items: [{ id: '549755885175', name: 'Shop Pinterest', owner: { username: 'shop' } }], bookmark: null })
    return { status: 404, body: { code: 404, message: 'Not found' } }
  })
  return { ...server, auth }
}

/** Salesforce: the web server flow with PKCE, instance_url in the token answer, userinfo and /services/oauth2/revoke. */
export async function startFakeSalesforce(app: App) {
  const auth = createAuthorizationServer({
    ...app, redirectUris: [app.redirectUri], authorizePath: '/services/oauth2/authorize', tokenPath: '/services/oauth2/token',
    tokenAnswer: (t) => ({ access_token: t.accessToken, refresh_token: t.refreshToken, instance_url: server.url, id: `${server.url}/id/00D000000000001/005000000000001`, token_type: 'Bearer', issued_at: String(Date.now()), signature: 's' }),
  })
  const server = await startFakeServer((request) => {
    const answered = auth.handle(request)
    if (answered) return answered
    if (request.method === 'POST' && request.path === '/services/oauth2/revoke') {
      return auth.revoke(new URLSearchParams(request.body).get('token') ?? '') ? ok('') : { status: 400, body: { error: 'unsupported_token_type', error_description: 'this token type is not supported' } }
    }
    if (!auth.isLive(bearerOf(request) ?? '')) return { status: 401, body: [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }] }
    if (request.path === '/services/oauth2/userinfo') return ok({ organization_id: '00D000000000001', preferred_username: 'owner@shop.example', user_id: '005000000000001' })
    return { status: 404, body: [{ message: 'The requested resource does not exist', errorCode: 'NOT_FOUND' }] }
  })
  return { ...server, auth }
}

/** HubSpot: /oauth/v1/token (PKCE accepted), token metadata at /oauth/v1/access-tokens/<token>, DELETE refresh-tokens. */
export async function startFakeHubSpot(app: App) {
  const auth = createAuthorizationServer({
    ...app, redirectUris: [app.redirectUri], authorizePath: '/oauth/authorize', tokenPath: '/oauth/v1/token',
    errorBody: (error, description) => ({ status: 'BAD_AUTH_CODE', message: description, error, error_description: description, correlationId: 'c' }),
  })
  const server = await startFakeServer((request) => {
    const answered = auth.handle(request)
    if (answered) return answered
    const info = /^\/oauth\/v1\/access-tokens\/(.+)$/.exec(request.path)
    if (info) return auth.isLive(decodeURIComponent(info[1]!)) ? ok({ token: info[1], user: 'owner@shop.example', hub_domain: 'shop.hubspot.com', hub_id: 48000001, app_id: 1, expires_in: 1800, scopes: ['crm.objects.contacts.read'], token_type: 'access' }) : { status: 404, body: { status: 'error', message: 'Token not found' } }
    const refresh = /^\/oauth\/v1\/refresh-tokens\/(.+)$/.exec(request.path)
    if (refresh && request.method === 'DELETE') return auth.revoke(decodeURIComponent(refresh[1]!)) ? { status: 204, body: '' } : { status: 404, body: { status: 'error', message: 'Token not found' } }
    return { status: 404, body: { status: 'error', message: 'Not found' } }
  })
  return { ...server, auth }
}

/** Meta Graph API: /me for a token, the ad accounts it may use and their pixels; OAuthException 190 for a bad token. */
export async function startFakeMeta(token: string) {
  return startFakeServer((request) => {
    if (bearerOf(request) !== token) return { status: 400, body: { error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190, fbtrace_id: 'A' } } }
    const path = request.path.replace(/^\/v[\d.]+/, '')
    if (path.startsWith('/me?')) return ok({ id: '122100000000000001', name: 'dcgate system user' })
    if (path.startsWith('/me/adaccounts')) return ok({ data: [{ id: 'act_1001', name: 'Shop ads' }], paging: {} })
    if (path.startsWith('/act_1001/adspixels')) return ok({ data: [{ id: '1234567890123456', name: 'Shop pixel' }] })
    return { status: 400, body: { error: { message: 'Unknown path components', type: 'OAuthException', code: 2500, fbtrace_id: 'A' } } }
  })
}

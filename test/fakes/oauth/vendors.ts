/**
 * Fakes for the Connect descriptors of the vendors other than Google: each speaks the vendor's authorization and token
 * endpoints (createAuthorizationServer, with the vendor's paths, client authentication and error envelope) and the
 * listing and revoke calls its descriptor makes, answering like the vendor's reference (plugins/dashboard/connect/README.md).
 */
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../server.ts'
import { createAuthorizationServer, type AuthorizationServer, type AuthorizationServerInit } from './authorization-server.ts'

export interface FakeVendor extends FakeServer { auth: AuthorizationServer }

type Listing = (request: RecordedRequest, url: URL, auth: AuthorizationServer) => FakeReply | undefined

async function startVendor(init: AuthorizationServerInit, listing: Listing, unauthorized: FakeReply): Promise<FakeVendor> {
  const auth = createAuthorizationServer(init)
  const server = await startFakeServer((request) => {
    const url = new URL(request.path, 'http://fake')
    return auth.handle(request) ?? listing(request, url, auth) ?? unauthorized
  })
  return { ...server, auth }
}

const bearerOf = (request: RecordedRequest) => /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1]
const ok = (body: unknown): FakeReply => ({ status: 200, body })

/** Microsoft identity platform + Customer/Campaign Management REST (DeveloperToken header required). */
export function startFakeMicrosoft(app: { clientId: string, clientSecret: string, redirectUri: string, developerToken: string }) {
  return startVendor(
    { ...app, redirectUris: [app.redirectUri], authorizePath: '/common/oauth2/v2.0/authorize', tokenPath: '/common/oauth2/v2.0/token' },
    (request, url, auth) => {
      if (!auth.isLive(bearerOf(request) ?? '')) return { status: 401, body: { TrackingId: 't', Errors: [{ Code: 109, ErrorCode: 'AuthenticationTokenExpired', Message: 'Authentication token expired.' }] } }
      if (request.headers.developertoken !== app.developerToken) return { status: 400, body: { TrackingId: 't', Errors: [{ Code: 105, ErrorCode: 'InvalidCredentials', Message: 'Authentication failed.' }] } }
      if (url.pathname === '/CustomerManagement/v13/User/Query') return ok({ User: { Id: 7001, UserName: 'owner@shop.example' } })
      if (url.pathname === '/CustomerManagement/v13/Accounts/Search') return ok({ Accounts: [{ Id: 150001, Name: 'Shop account', ParentCustomerId: 250001 }] })
      if (url.pathname === '/CampaignManagement/v13/UetTags/QueryByIds' && request.headers.customeraccountid === '150001') return ok({ UetTags: [{ Id: 187004321, Name: 'Shop tag' }] })
      if (url.pathname === '/CampaignManagement/v13/UetTagAuthKey/Query') return ok({ TagAuthKey: { AuthKey: 'uet-capi-token' } })
      return undefined
    },
    { status: 404, body: {} },
  )
}

/** LinkedIn OAuth (no refresh token unless asked) + Marketing API reads, with /oauth/v2/revoke. */
export function startFakeLinkedIn(app: { clientId: string, clientSecret: string, redirectUri: string }) {
  return startVendor(
    {
      ...app, redirectUris: [app.redirectUri], authorizePath: '/oauth/v2/authorization', tokenPath: '/oauth/v2/accessToken',
      tokenAnswer: (t) => ({ access_token: t.accessToken, expires_in: 5183999, refresh_token: t.refreshToken, refresh_token_expires_in: 31535999, scope: 'r_ads,rw_conversions' }),
    },
    (request, url, auth) => {
      if (request.method === 'POST' && url.pathname === '/oauth/v2/revoke') {
        const form = new URLSearchParams(request.body)
        return auth.revoke(form.get('token') ?? '') ? ok('') : { status: 400, body: { error: 'invalid_request', error_description: 'Token is invalid' } }
      }
      if (!auth.isLive(bearerOf(request) ?? '')) return { status: 401, body: { status: 401, serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN', message: 'Invalid access token' } }
      if (!request.headers['linkedin-version']) return { status: 426, body: { status: 426, code: 'NONEXISTENT_VERSION', message: 'Requested version  is not active' } }
      if (url.pathname === '/rest/adAccountUsers' && url.searchParams.get('q') === 'authenticatedUser') {
        return ok({ elements: [{ account: 'urn:li:sponsoredAccount:507404993', role: 'ACCOUNT_MANAGER' }, { account: 'urn:li:sponsoredAccount:600000001', role: 'VIEWER' }] })
      }
      if (url.pathname === '/rest/adAccounts/507404993') return ok({ id: 507404993, name: 'Shop ads' })
      if (url.pathname === '/rest/conversions' && url.searchParams.get('account') === 'urn:li:sponsoredAccount:507404993') {
        return ok({ elements: [{ id: 104012, name: 'CAPI purchase', conversionMethod: 'CONVERSIONS_API', enabled: true }, { id: 104013, name: 'Insight tag', conversionMethod: 'INSIGHT_TAG', enabled: true }] })
      }
      return undefined
    },
    { status: 404, body: {} },
  )
}

/** TikTok API for Business: auth_code back, JSON token request, `{ code, message, data }` answers (HTTP 200 even for errors). */
export function startFakeTikTok(app: { clientId: string, clientSecret: string, redirectUri: string }) {
  const refuse = (code: number, message: string): FakeReply => ({ status: 200, body: { code, message, request_id: 'r', data: {} } })
  return startVendor(
    {
      ...app, redirectUris: [app.redirectUri], authorizePath: '/portal/auth', tokenPath: '/open_api/v1.3/oauth2/access_token/',
      codeParam: 'auth_code', clientIdParam: 'app_id', tokenBody: 'json',
      tokenAnswer: (t) => ({ code: 0, message: 'OK', request_id: 'r', data: { access_token: t.accessToken, advertiser_ids: ['7000000001'], scope: [4, 5] } }),
      errorStatus: 200,
      errorBody: (error, description) => ({ code: error === 'invalid_client' ? 40001 : 40102, message: description, request_id: 'r', data: {} }),
    },
    (request, url, auth) => {
      const body = request.body ? JSON.parse(request.body) : {}
      if (url.pathname === '/open_api/v1.3/oauth2/revoke_token/') {
        if (body.app_id !== app.clientId || body.secret !== app.clientSecret) return refuse(40001, 'app_id or secret is invalid')
        return auth.revoke(body.access_token) ? ok({ code: 0, message: 'OK', request_id: 'r', data: {} }) : refuse(40105, 'Access token is invalid or has been revoked')
      }
      if (!auth.isLive(String(request.headers['access-token'] ?? ''))) return refuse(40105, 'Access token is invalid or has been revoked')
      if (url.pathname === '/open_api/v1.3/oauth2/advertiser/get/') {
        if (url.searchParams.get('secret') !== app.clientSecret) return refuse(40001, 'app_id or secret is invalid')
        return ok({ code: 0, message: 'OK', request_id: 'r', data: { list: [{ advertiser_id: '7000000001', advertiser_name: 'Shop TikTok' }] } })
      }
      if (url.pathname === '/open_api/v1.3/pixel/list/' && url.searchParams.get('advertiser_id') === '7000000001') {
        return ok({ code: 0, message: 'OK', request_id: 'r', data: { pixels: [{ pixel_id: '1', pixel_code: 'C4ABCDEFGHIJKLMN1234', pixel_name: 'Shop pixel' }], page_info: { page: 1, total_number: 1 } } })
      }
      return undefined
    },
    { status: 404, body: { code: 40002, message: 'Not found' } },
  )
}

/**
 * One Google account as a shop owner meets it: behind one origin, the Connect fake (consent page, token by code,
 * the account listing) and the Google Ads fake (token by refresh, Data Manager ingestion). Google's token endpoint
 * takes both grants, so `/token` goes to the Connect fake for `authorization_code` and to the Ads fake for
 * `refresh_token`; the refresh token issued at consent is the one the Ads fake takes. For tests that follow a site from
 * "Connect" to a delivered conversion (test/e2e/setup-walkthrough.test.ts).
 */
import { startFakeGoogleAds, type FakeGoogleAds } from '../google-ads.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../server.ts'
import { startFakeGoogleConnect, type FakeGoogleConnect } from './google.ts'

export interface FakeGoogleAccountInit {
  clientId: string
  clientSecret: string
  /** The redirect URI registered for the OAuth client: `<server.baseUrl>/dashboard/oauth/google/callback`. */
  redirectUri: string
  /** customer id → its name and enabled conversion actions (id → name). */
  customers: Record<string, { name: string, actions: Record<string, string> }>
}

export interface FakeGoogleAccount extends FakeServer {
  connect: FakeGoogleConnect
  ads: FakeGoogleAds
}

const REFRESH_TOKEN = '1//0g-consented-refresh-token'

export async function startFakeGoogleAccount(init: FakeGoogleAccountInit): Promise<FakeGoogleAccount> {
  const connect = await startFakeGoogleConnect({ ...init, refreshToken: REFRESH_TOKEN })
  const ads = await startFakeGoogleAds({
    clientId: init.clientId, clientSecret: init.clientSecret, refreshToken: REFRESH_TOKEN,
    customers: Object.fromEntries(Object.entries(init.customers).map(([id, customer]) => [id, Object.keys(customer.actions)])),
  })
  const front = await startFakeServer((request) => forward(request, towards(request) === 'ads' ? ads.url : connect.url))
  return {
    ...front, connect, ads,
    close: async () => {
      await front.close()
      await Promise.all([connect.close(), ads.close()])
    },
  }
}

/** Which fake answers: the Ads fake for the ingestion API and the refresh grant, the Connect fake for the rest. */
function towards(request: RecordedRequest): 'ads' | 'connect' {
  const path = request.path.split('?')[0]!
  if (path.startsWith('/v1/') || path === '/tokeninfo') return 'ads'
  if (path === '/token') return new URLSearchParams(request.body).get('grant_type') === 'refresh_token' ? 'ads' : 'connect'
  return 'connect'
}

async function forward(request: RecordedRequest, origin: string): Promise<FakeReply> {
  const headers: Record<string, string> = {}
  for (const name of ['content-type', 'authorization', 'login-customer-id']) {
    const value = request.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  const response = await fetch(`${origin}${request.path}`, {
    method: request.method, headers, redirect: 'manual',
    body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
  })
  const passed: Record<string, string> = {}
  for (const name of ['content-type', 'location']) {
    const value = response.headers.get(name)
    if (value) passed[name] = value
  }
  return { status: response.status, body: await response.text(), headers: passed }
}

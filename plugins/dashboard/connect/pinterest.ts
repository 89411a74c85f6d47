/**
 * Pinterest API v5: www.pinterest.com/oauth/ with comma-separated scopes (ads:read, ads:write), the token request
 * with the client's id and secret as HTTP Basic, then GET /v5/ad_accounts. No PKCE and no revoke endpoint is
 * documented; access tokens last 30 days, refresh tokens a year (README.md).
 */
import { PINTEREST_API_VERSION } from '../../../adapters/ads/pinterest/version.ts'
import { authorizeUrl, exchangeCode, okJson } from './http.ts'
import { baseUrlOption, pickedOne } from './options.ts'
import type { ConnectVendor } from './types.ts'

const VENDOR = 'Pinterest'

export const pinterest: ConnectVendor = {
  platform: 'pinterest',
  adapter: 'pinterest',
  kind: 'ad-platform',
  label: 'Pinterest',
  defaults: { authorizeUrl: 'https://www.pinterest.com/oauth/', tokenUrl: `https://api.pinterest.com/${PINTEREST_API_VERSION}/oauth/token`, apiBaseUrl: 'https://api.pinterest.com' },
  scopes: ['ads:read', 'ads:write'],
  pkce: false,
  authorizeUrl: (app, state) => authorizeUrl(app, { client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'code', scope: pinterest.scopes.join(','), state }),
  exchange: (ctx, code) => exchangeCode(ctx.fetch, VENDOR, ctx.app, { code, clientAuth: 'basic' }),
  async list(ctx, grant) {
    const body = await okJson(ctx.fetch, VENDOR, `${ctx.app.apiBaseUrl}/${PINTEREST_API_VERSION}/ad_accounts?page_size=100`, { headers: { authorization: `Bearer ${grant.accessToken}` } })
    const accounts = (Array.isArray(body.items) ? body.items : []).map((account: any) => ({ value: String(account.id), label: `${account.name ?? account.id} (${account.id})` }))
    return [{ name: 'adAccount', label: 'Ad account', choices: accounts }]
  },
  toOptions: (ctx, grant, picked) => ({ adAccountId: pickedOne(picked, 'adAccount', undefined, 'an ad account'), accessToken: grant.accessToken, ...baseUrlOption(ctx.app) }),
}

/**
 * TikTok API for Business: the advertiser authorization (portal/auth with app_id, state and redirect_uri; no PKCE, the
 * scopes are the app's), a JSON token request answering a long-term access token and the advertiser ids, then the
 * advertisers (oauth2/advertiser/get) and each one's pixels (pixel/list). Errors come as `{ code, message }` with
 * HTTP 200. Revoke: oauth2/revoke_token (README.md).
 */
import { TIKTOK_API_VERSION } from '../../../adapters/ads/tiktok/version.ts'
import { VendorError, oneLine } from './errors.ts'
import { authorizeUrl, okJson } from './http.ts'
import { baseUrlOption, besideToken, pickedOne } from './options.ts'
import type { ConnectVendor, Fetch, Grant, VendorContext } from './types.ts'

const VENDOR = 'TikTok'
const MAX_ADVERTISERS = 20

/** TikTok answers 200 with `code` ≠ 0 for a refusal. */
async function tiktokCall(fetch: Fetch, url: string, init: RequestInit): Promise<any> {
  const body = await okJson(fetch, VENDOR, url, init)
  if (body.code !== 0) throw new VendorError(`${VENDOR} refused: ${oneLine(String(body.message ?? 'unknown error'))} (code ${body.code})`, String(body.code))
  return body.data ?? {}
}

const api = (ctx: VendorContext, path: string) => `${ctx.app.apiBaseUrl}/open_api/${TIKTOK_API_VERSION}${path}`
const get = (ctx: VendorContext, grant: Grant, path: string) => tiktokCall(ctx.fetch, api(ctx, path), { headers: { 'Access-Token': grant.accessToken } })

export const tiktok: ConnectVendor = {
  platform: 'tiktok',
  adapter: 'tiktok',
  kind: 'ad-platform',
  label: 'TikTok',
  defaults: {
    authorizeUrl: 'https://business-api.tiktok.com/portal/auth',
    tokenUrl: `https://business-api.tiktok.com/open_api/${TIKTOK_API_VERSION}/oauth2/access_token/`,
    apiBaseUrl: 'https://business-api.tiktok.com',
  },
  scopes: [],
  pkce: false,
  authorizeUrl: (app, state) => authorizeUrl(app, { app_id: app.clientId, state, redirect_uri: app.redirectUri }),
  async exchange(ctx, code) {
    const data = await tiktokCall(ctx.fetch, ctx.app.tokenUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ app_id: ctx.app.clientId, secret: ctx.app.clientSecret, auth_code: code }),
    })
    if (typeof data.access_token !== 'string' || !data.access_token) throw new VendorError(`${VENDOR} answered without an access token`)
    return { accessToken: data.access_token, fields: {} }
  },
  async list(ctx, grant) {
    const query = new URLSearchParams({ app_id: ctx.app.clientId, secret: ctx.app.clientSecret })
    const advertisers = await get(ctx, grant, `/oauth2/advertiser/get/?${query}`)
    const pixels = []
    for (const advertiser of (Array.isArray(advertisers.list) ? advertisers.list : []).slice(0, MAX_ADVERTISERS)) {
      const listed = await get(ctx, grant, `/pixel/list/?${new URLSearchParams({ advertiser_id: String(advertiser.advertiser_id), page_size: '20' })}`)
      for (const pixel of Array.isArray(listed.pixels) ? listed.pixels : []) {
        pixels.push({ value: String(pixel.pixel_code), label: `${pixel.pixel_name ?? pixel.pixel_code} (${pixel.pixel_code}) — ${advertiser.advertiser_name ?? advertiser.advertiser_id}` })
      }
    }
    return [{ name: 'pixel', label: 'Pixel', choices: pixels }]
  },
  toOptions: (ctx, grant, picked) => ({ pixelCode: pickedOne(picked, 'pixel', undefined, 'a pixel'), accessToken: grant.accessToken, ...baseUrlOption(ctx.app) }),
  async revoke(ctx, options) {
    if (typeof options.accessToken !== 'string') return
    const url = besideToken(ctx.app, api(ctx, '/oauth2/revoke_token/'), /access_token\/?$/, 'revoke_token/')
    await tiktokCall(ctx.fetch, url, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ app_id: ctx.app.clientId, secret: ctx.app.clientSecret, access_token: options.accessToken }),
    })
  },
}

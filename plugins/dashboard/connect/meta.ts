/**
 * Meta: no OAuth app here; the owner pastes a system-user access token (Business Settings → System users → Generate
 * new token, with ads_management), checked at once with GET /me, and the pixels of the ad accounts it may use are
 * listed (GET /me/adaccounts, then /act_<id>/adspixels). Nothing to revoke from here: the owner removes the token in
 * Business Settings (README.md).
 */
import { META_API_VERSION } from '../../../adapters/ads/meta/version.ts'
import { okJson } from './http.ts'
import { baseUrlOption, pickedOne } from './options.ts'
import type { Choice, ConnectVendor, Grant, VendorContext } from './types.ts'

const VENDOR = 'Meta'
const MAX_ACCOUNTS = 25

const get = (ctx: VendorContext, grant: Grant, path: string) =>
  okJson(ctx.fetch, VENDOR, `${ctx.app.apiBaseUrl}/${META_API_VERSION}${path}`, { headers: { authorization: `Bearer ${grant.accessToken}` } })

export const meta: ConnectVendor = {
  platform: 'meta',
  adapter: 'meta',
  kind: 'ad-platform',
  label: 'Meta',
  defaults: { authorizeUrl: '', tokenUrl: '', apiBaseUrl: 'https://graph.facebook.com' },
  scopes: ['ads_management'],
  pkce: false,
  authorizeUrl: () => '',
  /** The "code" is the pasted token: it is checked by asking Meta who it belongs to. */
  async exchange(ctx, token) {
    const grant: Grant = { accessToken: token, fields: {} }
    const me = await get(ctx, grant, '/me?fields=id,name')
    return { ...grant, fields: { userId: String(me.id ?? ''), name: String(me.name ?? '') } }
  },
  async list(ctx, grant) {
    const accounts = await get(ctx, grant, `/me/adaccounts?fields=id,name&limit=${MAX_ACCOUNTS}`)
    const pixels: Choice[] = []
    for (const account of Array.isArray(accounts.data) ? accounts.data.slice(0, MAX_ACCOUNTS) : []) {
      const listed = await get(ctx, grant, `/${encodeURIComponent(String(account.id))}/adspixels?fields=id,name`)
      for (const pixel of Array.isArray(listed.data) ? listed.data : []) {
        if (/^\d{1,20}$/.test(String(pixel.id)) && !pixels.some((p) => p.value === String(pixel.id))) {
          pixels.push({ value: String(pixel.id), label: `${pixel.name ?? pixel.id} (${pixel.id}) — ${account.name ?? account.id}` })
        }
      }
    }
    return [{ name: 'pixel', label: 'Pixel (dataset)', choices: pixels }]
  },
  toOptions: (ctx, grant, picked) => ({ pixelId: pickedOne(picked, 'pixel', undefined, 'a pixel'), accessToken: grant.accessToken, ...baseUrlOption(ctx.app) }),
}

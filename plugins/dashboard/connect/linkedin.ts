/**
 * LinkedIn Marketing API: the 3-legged authorization code flow with r_ads and rw_conversions (no PKCE for web apps),
 * then the member's ad accounts (adAccountUsers?q=authenticatedUser, VIEWER left out: it cannot stream conversions)
 * and each account's Conversions API rules (conversions?q=account). A programmatic refresh token (365 days) when the
 * app has one, else the 60-day access token. Revoke: POST oauth/v2/revoke (README.md).
 */
import { LINKEDIN_API_VERSION } from '../../../adapters/ads/linkedin/version.ts'
import { PickProblem } from './errors.ts'
import { exchangeCode, okJson, okStatus, standardAuthorize } from './http.ts'
import { baseUrlOption, besideToken, perEvent, pickedOne } from './options.ts'
import type { ConnectVendor, Grant, VendorContext } from './types.ts'

const VENDOR = 'LinkedIn'
const ACCOUNT = 'urn:li:sponsoredAccount:'

const get = (ctx: VendorContext, grant: Grant, path: string) => okJson(ctx.fetch, VENDOR, `${ctx.app.apiBaseUrl}/rest${path}`, {
  headers: { authorization: `Bearer ${grant.accessToken}`, 'LinkedIn-Version': LINKEDIN_API_VERSION, 'X-Restli-Protocol-Version': '2.0.0' },
})

export const linkedin: ConnectVendor = {
  platform: 'linkedin',
  adapter: 'linkedin',
  kind: 'ad-platform',
  label: 'LinkedIn',
  defaults: { authorizeUrl: 'https://www.linkedin.com/oauth/v2/authorization', tokenUrl: 'https://www.linkedin.com/oauth/v2/accessToken', apiBaseUrl: 'https://api.linkedin.com' },
  scopes: ['r_ads', 'rw_conversions'],
  pkce: false,
  authorizeUrl: (app, state) => standardAuthorize(app, state, undefined, linkedin.scopes.join(' ')),
  exchange: (ctx, code) => exchangeCode(ctx.fetch, VENDOR, ctx.app, { code, clientAuth: 'post' }),
  async list(ctx, grant) {
    const users = await get(ctx, grant, '/adAccountUsers?q=authenticatedUser')
    const accounts = []
    const rules = []
    for (const user of Array.isArray(users.elements) ? users.elements : []) {
      const id = String(user.account ?? '').replace(ACCOUNT, '')
      if (!/^\d+$/.test(id) || user.role === 'VIEWER') continue
      const account = await get(ctx, grant, `/adAccounts/${id}`)
      accounts.push({ value: id, label: `${account.name ?? id} (${id})` })
      const listed = await get(ctx, grant, `/conversions?q=account&account=${encodeURIComponent(`${ACCOUNT}${id}`)}`)
      for (const rule of Array.isArray(listed.elements) ? listed.elements : []) {
        if (rule.conversionMethod === 'CONVERSIONS_API' && rule.enabled !== false) rules.push({ value: `${id}/${rule.id}`, label: `${rule.name ?? rule.id} — ${account.name ?? id}` })
      }
    }
    return [
      { name: 'account', label: 'Ad account', choices: accounts },
      { name: 'rule', label: 'Conversion rule', choices: rules, perEvent: true, optional: true },
    ]
  },
  toOptions(ctx, grant, picked) {
    const account = pickedOne(picked, 'account', undefined, 'an ad account')
    const conversionRules = perEvent(picked, 'rule', (value) => {
      const [owner, rule] = value.split('/')
      if (owner !== account || !/^\d{1,19}$/.test(rule ?? '')) throw new PickProblem('Every conversion rule picked must belong to the ad account picked.')
      return rule
    })
    if (!Object.keys(conversionRules).length) throw new PickProblem('Pick a conversion rule for at least one event.')
    const credentials = grant.refreshToken
      ? { clientId: ctx.app.clientId, clientSecret: ctx.app.clientSecret, refreshToken: grant.refreshToken, ...(ctx.app.overrides.tokenUrl ? { oauthUrl: ctx.app.overrides.tokenUrl } : {}) }
      : { accessToken: grant.accessToken }
    return { ...credentials, conversionRules, ...baseUrlOption(ctx.app) }
  },
  async revoke(ctx, options) {
    const token = typeof options.refreshToken === 'string' ? options.refreshToken : options.accessToken
    if (typeof token !== 'string') return
    const url = besideToken(ctx.app, 'https://www.linkedin.com/oauth/v2/revoke', /accessToken$/, 'revoke')
    await okStatus(ctx.fetch, VENDOR, url, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: ctx.app.clientId, client_secret: ctx.app.clientSecret, token }).toString(),
    })
  },
}

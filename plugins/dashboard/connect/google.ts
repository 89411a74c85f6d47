/**
 * Google: one consent for both scopes the Google Ads destination uses — the Data Manager API's (conversions) and the
 * Google Ads API's (the listing: customers:listAccessibleCustomers, then GAQL for each customer's name and enabled
 * conversion actions). PKCE S256, offline access with a forced consent so a refresh token comes back (README.md).
 */
import { UPLOAD_CLICKS_VERSION } from '../../../adapters/ads/google-ads/version.ts'
import { PickProblem } from './errors.ts'
import { exchangeCode, okJson, okStatus, standardAuthorize } from './http.ts'
import { baseUrlOption, besideToken, perEvent, pickedOne } from './options.ts'
import type { ConnectVendor, Grant, VendorContext } from './types.ts'

const VENDOR = 'Google'
/** Customers listed at most (each costs two searches). */
const MAX_CUSTOMERS = 20

const bearer = (grant: Grant) => ({ authorization: `Bearer ${grant.accessToken}` })

async function search(ctx: VendorContext, grant: Grant, customerId: string, query: string): Promise<any[]> {
  const url = `${ctx.app.apiBaseUrl}/${UPLOAD_CLICKS_VERSION}/customers/${customerId}/googleAds:search`
  const body = await okJson(ctx.fetch, VENDOR, url, { method: 'POST', headers: { ...bearer(grant), 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
  return Array.isArray(body.results) ? body.results : []
}

export const google: ConnectVendor = {
  platform: 'google',
  adapter: 'google_ads',
  kind: 'ad-platform',
  label: 'Google Ads',
  defaults: { authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth', tokenUrl: 'https://oauth2.googleapis.com/token', apiBaseUrl: 'https://googleads.googleapis.com' },
  scopes: ['https://www.googleapis.com/auth/datamanager', 'https://www.googleapis.com/auth/adwords'],
  pkce: true,
  authorizeUrl: (app, state, challenge) => standardAuthorize(app, state, challenge, google.scopes.join(' '), { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' }),
  async exchange(ctx, code, verifier) {
    const grant = await exchangeCode(ctx.fetch, VENDOR, ctx.app, { code, verifier, clientAuth: 'post' })
    if (!grant.refreshToken) throw new PickProblem('Google gave no refresh token. Remove dcgate\'s access at myaccount.google.com/permissions and connect again.')
    return grant
  },
  async list(ctx, grant) {
    const listed = await okJson(ctx.fetch, VENDOR, `${ctx.app.apiBaseUrl}/${UPLOAD_CLICKS_VERSION}/customers:listAccessibleCustomers`, { headers: bearer(grant) })
    const ids = (Array.isArray(listed.resourceNames) ? listed.resourceNames as unknown[] : [])
      .map((name) => /^customers\/(\d{10})$/.exec(String(name))?.[1]).filter((id): id is string => !!id).slice(0, MAX_CUSTOMERS)
    const customers = []
    const actions = []
    for (const id of ids) {
      const [customer] = await search(ctx, grant, id, 'SELECT customer.id, customer.descriptive_name FROM customer')
      const name = String(customer?.customer?.descriptiveName ?? '')
      customers.push({ value: id, label: `${name || 'Unnamed account'} (${id.replace(/(\d{3})(\d{3})(\d{4})/, '$1-$2-$3')})` })
      const rows = await search(ctx, grant, id, 'SELECT conversion_action.id, conversion_action.name, conversion_action.status FROM conversion_action WHERE conversion_action.status = \'ENABLED\'')
      for (const row of rows) {
        const action = row.conversionAction
        if (action?.id) actions.push({ value: `${id}/${action.id}`, label: `${action.name ?? action.id} — ${name || id}` })
      }
    }
    return [
      { name: 'customer', label: 'Google Ads account', choices: customers },
      { name: 'action', label: 'Conversion action', choices: actions, perEvent: true, optional: true },
    ]
  },
  toOptions(ctx, grant, picked) {
    const customerId = pickedOne(picked, 'customer', undefined, 'a Google Ads account')
    if (!/^\d{10}$/.test(customerId)) throw new PickProblem('Pick a Google Ads account.')
    const conversionActions = perEvent(picked, 'action', (value) => {
      const [owner, action] = value.split('/')
      if (owner !== customerId || !/^\d{1,19}$/.test(action ?? '')) throw new PickProblem('Every conversion action picked must belong to the Google Ads account picked.')
      return action
    })
    if (!Object.keys(conversionActions).length) throw new PickProblem('Pick a conversion action for at least one event.')
    return {
      customerId, clientId: ctx.app.clientId, clientSecret: ctx.app.clientSecret, refreshToken: grant.refreshToken, conversionActions,
      ...baseUrlOption(ctx.app), ...(ctx.app.overrides.tokenUrl ? { oauthUrl: ctx.app.overrides.tokenUrl } : {}),
    }
  },
  async revoke(ctx, options) {
    const token = options.refreshToken
    if (typeof token !== 'string') return
    const url = besideToken(ctx.app, 'https://oauth2.googleapis.com/revoke', /\/token$/, '/revoke')
    await okStatus(ctx.fetch, VENDOR, url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() })
  },
}

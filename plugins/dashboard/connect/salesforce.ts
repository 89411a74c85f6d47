/**
 * Salesforce: the OAuth 2.0 web server flow with PKCE (S256) and the scopes `api refresh_token`; the token answer
 * names the org's `instance_url`, shown for the owner to confirm (with the user and org from /services/oauth2/userinfo)
 * and picked with the site event a qualified lead sends as. Revoke: POST /services/oauth2/revoke (README.md).
 */
import { exchangeCode, okJson, okStatus, standardAuthorize } from './http.ts'
import { eventChoices, pickedOne } from './options.ts'
import type { ConnectApp, ConnectVendor } from './types.ts'

const VENDOR = 'Salesforce'
const LOGIN = 'https://login.salesforce.com'

/** The login host the poller refreshes at: the overridden token URL's, else login.salesforce.com. */
const loginUrl = (app: ConnectApp) => app.overrides.tokenUrl?.replace(/\/services\/oauth2\/token$/, '') ?? LOGIN
/** Where the org's API answers: the config's apiBaseUrl when set, else the instance the token answer named. */
const instance = (app: ConnectApp, fields: Record<string, string>) => app.overrides.apiBaseUrl ?? fields.instance_url ?? app.apiBaseUrl

export const salesforce: ConnectVendor = {
  platform: 'salesforce',
  adapter: 'salesforce',
  kind: 'crm-poller',
  label: 'Salesforce',
  defaults: { authorizeUrl: `${LOGIN}/services/oauth2/authorize`, tokenUrl: `${LOGIN}/services/oauth2/token`, apiBaseUrl: LOGIN },
  scopes: ['api', 'refresh_token'],
  pkce: true,
  authorizeUrl: (app, state, challenge) => standardAuthorize(app, state, challenge, salesforce.scopes.join(' ')),
  exchange: (ctx, code, verifier) => exchangeCode(ctx.fetch, VENDOR, ctx.app, { code, verifier, clientAuth: 'post' }),
  async list(ctx, grant) {
    const base = instance(ctx.app, grant.fields)
    const user = await okJson(ctx.fetch, VENDOR, `${base}/services/oauth2/userinfo`, { headers: { authorization: `Bearer ${grant.accessToken}` } })
    const org = { value: base, label: `${user.preferred_username ?? user.email ?? 'Salesforce user'} — org ${user.organization_id ?? '?'} at ${base}` }
    return [
      { name: 'instance', label: 'Salesforce org', choices: [org] },
      { name: 'eventName', label: 'Site event a qualified lead is sent as', choices: eventChoices(ctx.siteEvents) },
    ]
  },
  toOptions: (ctx, grant, picked) => ({
    clientId: ctx.app.clientId, clientSecret: ctx.app.clientSecret, refreshToken: grant.refreshToken,
    eventName: pickedOne(picked, 'eventName', eventChoices(ctx.siteEvents), 'the site event'),
    loginUrl: loginUrl(ctx.app), baseUrl: instance(ctx.app, grant.fields),
  }),
  async revoke(ctx, options) {
    if (typeof options.refreshToken !== 'string') return
    await okStatus(ctx.fetch, VENDOR, `${loginUrl(ctx.app)}/services/oauth2/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: options.refreshToken }).toString(),
    })
  },
}

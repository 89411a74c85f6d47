/**
 * HubSpot: the app's install URL (app.hubspot.com/oauth/authorize, scope crm.objects.contacts.read, PKCE accepted),
 * the token endpoint (/oauth/v1/token, form with the client's secret), and the token's metadata for the portal
 * (GET /oauth/v1/access-tokens/<token>: hub_id, hub_domain, user) shown for the owner to confirm, picked with the
 * site event. Revoke: DELETE /oauth/v1/refresh-tokens/<token> (README.md).
 */
import { exchangeCode, okJson, okStatus, standardAuthorize } from './http.ts'
import { baseUrlOption, eventChoices, pickedOne } from './options.ts'
import type { ConnectVendor } from './types.ts'

const VENDOR = 'HubSpot'

export const hubspot: ConnectVendor = {
  platform: 'hubspot',
  adapter: 'hubspot',
  kind: 'crm-poller',
  label: 'HubSpot',
  defaults: { authorizeUrl: 'https://app.hubspot.com/oauth/authorize', tokenUrl: 'https://api.hubapi.com/oauth/v1/token', apiBaseUrl: 'https://api.hubapi.com' },
  scopes: ['crm.objects.contacts.read'],
  pkce: true,
  authorizeUrl: (app, state, challenge) => standardAuthorize(app, state, challenge, hubspot.scopes.join(' ')),
  exchange: (ctx, code, verifier) => exchangeCode(ctx.fetch, VENDOR, ctx.app, { code, verifier, clientAuth: 'post' }),
  async list(ctx, grant) {
    const info = await okJson(ctx.fetch, VENDOR, `${ctx.app.apiBaseUrl}/oauth/v1/access-tokens/${encodeURIComponent(grant.accessToken)}`)
    const portal = { value: String(info.hub_id ?? ''), label: `${info.hub_domain ?? 'HubSpot account'} (portal ${info.hub_id ?? '?'}, ${info.user ?? 'unknown user'})` }
    return [
      { name: 'portal', label: 'HubSpot account', choices: [portal] },
      { name: 'eventName', label: 'Site event a qualified contact is sent as', choices: eventChoices(ctx.siteEvents) },
    ]
  },
  // The refresh token with the app's credentials (adapters/crm/hubspot/auth.ts): an access token lasts 30 minutes.
  toOptions: (ctx, grant, picked) => ({
    ...(grant.refreshToken ? { clientId: ctx.app.clientId, clientSecret: ctx.app.clientSecret, refreshToken: grant.refreshToken } : { accessToken: grant.accessToken }),
    ...(ctx.app.overrides.tokenUrl ? { oauthUrl: ctx.app.overrides.tokenUrl } : {}),
    eventName: pickedOne(picked, 'eventName', eventChoices(ctx.siteEvents), 'the site event'), ...baseUrlOption(ctx.app),
  }),
  async revoke(ctx, options) {
    if (typeof options.refreshToken !== 'string') return
    await okStatus(ctx.fetch, VENDOR, `${ctx.app.apiBaseUrl}/oauth/v1/refresh-tokens/${encodeURIComponent(options.refreshToken)}`, { method: 'DELETE' })
  },
}

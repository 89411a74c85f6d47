/**
 * Microsoft Advertising: the Microsoft identity platform's authorization code flow with PKCE and the scopes
 * `https://ads.microsoft.com/msads.manage offline_access`; then, with the operator's developer token, the Customer
 * Management API (REST: User/Query, Accounts/Search) for the accounts the user reaches and the Campaign Management
 * API (UetTags/QueryByIds) for each account's UET tags. The picked tag's Conversions API token is read with
 * UetTagAuthKey/Query. The identity platform documents no revoke endpoint for a refresh token (README.md).
 */
import { CAMPAIGN_API_URL } from '../../../adapters/ads/microsoft-ads/map-adjustments.ts'
import { PickProblem } from './errors.ts'
import { exchangeCode, okJson, standardAuthorize } from './http.ts'
import { baseUrlOption, pickedOne } from './options.ts'
import type { ConnectVendor, Grant, VendorContext } from './types.ts'

const VENDOR = 'Microsoft Advertising'
const MAX_ACCOUNTS = 20

const campaignBase = (ctx: VendorContext) => ctx.app.overrides.apiBaseUrl ?? CAMPAIGN_API_URL
function post(ctx: VendorContext, grant: Grant, url: string, body: unknown, account?: { customerId: string, accountId: string }) {
  if (!ctx.app.developerToken) throw new PickProblem('Microsoft Advertising needs a developer token: set oauth.microsoft_ads.developerToken in the config file.')
  return okJson(ctx.fetch, VENDOR, url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', authorization: `Bearer ${grant.accessToken}`, DeveloperToken: ctx.app.developerToken,
      ...(account ? { CustomerId: account.customerId, CustomerAccountId: account.accountId } : {}),
    },
    body: JSON.stringify(body),
  })
}

export const microsoftAds: ConnectVendor = {
  platform: 'microsoft_ads',
  adapter: 'microsoft_ads',
  kind: 'ad-platform',
  label: 'Microsoft Advertising',
  defaults: {
    authorizeUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    apiBaseUrl: 'https://clientcenter.api.bingads.microsoft.com',
  },
  scopes: ['https://ads.microsoft.com/msads.manage', 'offline_access'],
  pkce: true,
  authorizeUrl: (app, state, challenge) => standardAuthorize(app, state, challenge, microsoftAds.scopes.join(' ')),
  exchange: (ctx, code, verifier) => exchangeCode(ctx.fetch, VENDOR, ctx.app, { code, verifier, clientAuth: 'post' }),
  async list(ctx, grant) {
    const base = `${ctx.app.apiBaseUrl}/CustomerManagement/v13`
    const user = await post(ctx, grant, `${base}/User/Query`, { UserId: null })
    const userId = user.User?.Id
    const found = await post(ctx, grant, `${base}/Accounts/Search`, {
      Predicates: [{ Field: 'UserId', Operator: 'Equals', Value: String(userId) }], Ordering: null, PageInfo: { Index: 0, Size: MAX_ACCOUNTS },
    })
    const tags = []
    for (const account of Array.isArray(found.Accounts) ? found.Accounts : []) {
      const ids = { customerId: String(account.ParentCustomerId), accountId: String(account.Id) }
      const listed = await post(ctx, grant, `${campaignBase(ctx)}/CampaignManagement/v13/UetTags/QueryByIds`, { TagIds: null }, ids)
      for (const tag of Array.isArray(listed.UetTags) ? listed.UetTags : []) {
        tags.push({ value: `${ids.customerId}/${ids.accountId}/${tag.Id}`, label: `${tag.Name ?? tag.Id} (tag ${tag.Id}) — ${account.Name ?? account.Id}` })
      }
    }
    return [{ name: 'tag', label: 'UET tag', choices: tags }]
  },
  async toOptions(ctx, grant, picked) {
    const [customerId, accountId, tagId] = pickedOne(picked, 'tag', undefined, 'a UET tag').split('/')
    if (![customerId, accountId, tagId].every((id) => /^\d{1,20}$/.test(id ?? ''))) throw new PickProblem('Pick a UET tag.')
    const key = await post(ctx, grant, `${campaignBase(ctx)}/CampaignManagement/v13/UetTagAuthKey/Query`, { TagId: Number(tagId) }, { customerId: customerId!, accountId: accountId! })
    const apiToken = key.TagAuthKey?.AuthKey
    if (typeof apiToken !== 'string' || !apiToken) throw new PickProblem('This UET tag has no Conversions API token yet: edit the tag in Microsoft Advertising → Use Conversions API, then connect again.')
    return {
      tagId, apiToken, ...baseUrlOption(ctx.app),
      adjustments: {
        clientId: ctx.app.clientId, clientSecret: ctx.app.clientSecret, refreshToken: grant.refreshToken, developerToken: ctx.app.developerToken, customerId, accountId,
        ...(ctx.app.overrides.apiBaseUrl ? { apiUrl: ctx.app.overrides.apiBaseUrl } : {}), ...(ctx.app.overrides.tokenUrl ? { oauthUrl: ctx.app.overrides.tokenUrl } : {}),
      },
    }
  },
}

/** Every Connect descriptor by its route name, and the app each runs with (the operator's `oauth.<platform>`). */
import type { ResolvedConfig } from '../../../core/config/schema.ts'
import { google } from './google.ts'
import { hubspot } from './hubspot.ts'
import { linkedin } from './linkedin.ts'
import { meta } from './meta.ts'
import { microsoftAds } from './microsoft-ads.ts'
import { pinterest } from './pinterest.ts'
import { salesforce } from './salesforce.ts'
import { tiktok } from './tiktok.ts'
import type { ConnectApp, ConnectVendor } from './types.ts'

export const vendors: readonly ConnectVendor[] = [google, meta, microsoftAds, linkedin, tiktok, pinterest, salesforce, hubspot]

export function vendorOf(platform: string): ConnectVendor | undefined {
  return vendors.find((vendor) => vendor.platform === platform)
}

/** The vendor's app with its URLs resolved; undefined when the config has no `oauth.<platform>` (Meta needs none). */
export function appOf(config: Readonly<ResolvedConfig>, vendor: ConnectVendor, baseUrl: string): ConnectApp | undefined {
  const redirectUri = `${baseUrl}/dashboard/oauth/${vendor.platform}/callback`
  if (vendor.platform === 'meta') {
    const apiBaseUrl = config.oauth.meta?.apiBaseUrl?.replace(/\/+$/, '')
    return { clientId: '', clientSecret: '', ...vendor.defaults, ...(apiBaseUrl ? { apiBaseUrl } : {}), redirectUri, overrides: apiBaseUrl ? { apiBaseUrl } : {} }
  }
  const own = config.oauth[vendor.platform]
  if (!own) return undefined
  const trim = (url: string | undefined) => url?.replace(/\/+$/, '')
  return {
    clientId: own.clientId, clientSecret: own.clientSecret, redirectUri, ...(own.developerToken ? { developerToken: own.developerToken } : {}),
    authorizeUrl: own.authorizeUrl ?? vendor.defaults.authorizeUrl,
    tokenUrl: own.tokenUrl ?? vendor.defaults.tokenUrl,
    apiBaseUrl: trim(own.apiBaseUrl) ?? vendor.defaults.apiBaseUrl,
    overrides: { ...(own.tokenUrl ? { tokenUrl: own.tokenUrl } : {}), ...(own.apiBaseUrl ? { apiBaseUrl: trim(own.apiBaseUrl) } : {}) },
  }
}

/**
 * "Test connection" and "Send test event" (dashboard Setup page). Neither API the adapter sends to has a read call the
 * destination's scope always allows, so the connection test asks Google's tokeninfo endpoint what the access token
 * the refresh token just bought may do (its `scope`); the test event is the same request with `validateOnly: true`,
 * which Google validates and does not execute (README "Testing from the dashboard").
 */
import type { ConnectionTest, TestEventSupport } from '../../../core/registry.ts'
import { parseJsonObject } from '../../shared/helpers.ts'
import type { GoogleAdsOptions } from './index.ts'
import { SCOPE } from './startup-check.ts'

export const googleConnectionTest: ConnectionTest<GoogleAdsOptions> = {
  toRequest: (options, auth) => {
    const token = /^Bearer (.+)$/.exec(auth.authorization ?? '')?.[1] ?? ''
    // The tokeninfo endpoint sits beside the token endpoint (oauth2.googleapis.com/token → /tokeninfo).
    const url = `${options.oauthUrl.replace(/\/token$/, '')}/tokeninfo?${new URLSearchParams({ access_token: token })}`
    return { url, method: 'GET', headers: {}, body: '' }
  },
  parseResponse: (response, options) => {
    const body = parseJsonObject(response.body)
    if (response.status !== 200 || typeof body?.scope !== 'string') {
      return { ok: false, message: typeof body?.error_description === 'string' ? body.error_description : `HTTP ${response.status}` }
    }
    const needed = options.api === 'upload-clicks' ? SCOPE.adwords : SCOPE.dataManager
    const granted = body.scope.split(/\s+/).filter(Boolean)
    if (!granted.includes(needed)) return { ok: false, message: `the refresh token works but was granted ${granted.join(' ') || 'no scope'}, not ${needed}` }
    return { ok: true, message: `the refresh token works and holds ${needed}` }
  },
}

export const googleTestEvents: TestEventSupport<GoogleAdsOptions> = {
  options: (options) => ({ ...options, validateOnly: true }),
}

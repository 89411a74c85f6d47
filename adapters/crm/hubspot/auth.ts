/**
 * The Bearer token of a HubSpot poll: the configured service key (or legacy private app token) as it is, or, for an
 * app connected through OAuth (the dashboard's Connect button), an access token from the refresh-token grant at
 * /oauth/v1/token (adapters/shared/oauth2.ts), cached until a minute before its `expires_in` (30 minutes). HubSpot's
 * refresh tokens do not rotate and last until the app is uninstalled or the token deleted.
 */
import type { CrmPollContext } from '../../../core/registry.ts'
import { OAuth2Error, resolveAccessToken, tokenCacheKey } from '../../shared/oauth2.ts'
import { CrmAuthError } from '../shared/errors.ts'
import { noAnswer, unexpectedAnswer } from '../shared/http.ts'
import type { HubspotOptions } from './index.ts'

export async function hubspotBearer(options: HubspotOptions, ctx: CrmPollContext): Promise<string> {
  if (options.accessToken) return options.accessToken
  const { clientId, clientSecret, refreshToken } = options as Required<Pick<HubspotOptions, 'clientId' | 'clientSecret' | 'refreshToken'>>
  const tokenUrl = options.oauthUrl ?? `${options.baseUrl}/oauth/v1/token`
  try {
    const { accessToken } = await resolveAccessToken(
      { tokenUrl, clientId, clientSecret, refreshToken },
      ctx,
      { vendor: 'HubSpot', cacheKey: tokenCacheKey('hubspot:access_token', tokenUrl, clientId, refreshToken), marginSeconds: 60 },
    )
    return accessToken
  }
  catch (error) {
    if (!(error instanceof OAuth2Error)) throw error
    if (!error.answer) throw noAnswer('hubspot', ctx, tokenUrl, error.cause)
    if (error.code && error.answer.status >= 400 && error.answer.status < 500) {
      throw new CrmAuthError('hubspot', `${error.message}: connect HubSpot again from the dashboard (the app was uninstalled or the refresh token deleted), or check clientId and clientSecret`, { status: error.answer.status })
    }
    throw unexpectedAnswer('hubspot', error.answer, 60_000)
  }
}

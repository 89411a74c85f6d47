/**
 * The Authorization header for one Conversions API call. OAuth 1.0a needs a fresh nonce and the current time in
 * every signature, so it is made here, per call, and never in the pure toRequest. The signed URL is rebuilt from the
 * options exactly as map.ts builds the request URL; the JSON body is not signed (oauth1.ts). No token is fetched
 * and nothing is cached: the credentials are long-lived and signing costs one HMAC.
 */
import type { AuthContext } from '../../../core/registry.ts'
import { conversionsUrl, type XOptions } from './map.ts'
import { createNonce, oauth1Header } from './oauth1.ts'

type AuthOptions = Pick<XOptions, 'consumerKey' | 'consumerSecret' | 'accessToken' | 'accessTokenSecret' | 'pixelId' | 'baseUrl'>

export async function authorizeX(options: AuthOptions, _ctx?: AuthContext): Promise<Record<string, string>> {
  return { authorization: signedHeader(options, createNonce(), Math.floor(Date.now() / 1000)) }
}

/** The header for a given nonce and time, so tests can pin both. */
export function signedHeader(options: AuthOptions, nonce: string, timestamp: number): string {
  const credentials = {
    consumerKey: options.consumerKey,
    consumerSecret: options.consumerSecret,
    token: options.accessToken,
    tokenSecret: options.accessTokenSecret,
  }
  return oauth1Header({ method: 'POST', url: conversionsUrl(options) }, credentials, nonce, timestamp)
}

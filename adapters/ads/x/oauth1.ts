/**
 * OAuth 1.0a request signing with HMAC-SHA1 (RFC 5849 §3.4), as the X Ads API requires on every call.
 * Pure given the nonce and timestamp; `createNonce` is the only randomness. Follows X's "Creating a signature" and
 * "Authorizing a request" pages, whose worked example test/adapters/x.suite.ts checks byte for byte.
 *
 * Only the query string, the oauth_* values and a form-encoded body are signed (RFC 5849 §3.4.1.3.1): a JSON body,
 * like the Conversions API's, is not part of the signature base string.
 */
import { createHmac, randomBytes } from 'node:crypto'

export interface OAuth1Credentials {
  /** The app's API key (consumer key) and secret. */
  consumerKey: string
  consumerSecret: string
  /** The user's access token and its secret. */
  token: string
  tokenSecret: string
}

export interface SignableRequest {
  method: string
  /** The full URL; its query parameters are signed, its fragment ignored. */
  url: string
  /** Parameters of an `application/x-www-form-urlencoded` body, decoded; leave out for any other body. */
  formParams?: readonly (readonly [string, string])[]
}

/** RFC 3986 percent-encoding: everything but ALPHA, DIGIT, "-", ".", "_" and "~" (encodeURIComponent spares !'()*). */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** The base string URI: lower-case scheme and host, the port only when not the default, no query or fragment. */
export function baseStringUri(url: string): string {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

/** METHOD&encoded-URI&encoded-parameter-string, parameters sorted by encoded key, then encoded value. */
export function signatureBaseString(request: SignableRequest, oauthParams: Readonly<Record<string, string>>): string {
  const params: [string, string][] = [
    ...new URL(request.url).searchParams,
    ...(request.formParams ?? []),
    ...Object.entries(oauthParams).filter(([key]) => key !== 'oauth_signature'),
  ].map(([key, value]) => [percentEncode(key), percentEncode(value)])
  params.sort(([keyA, valueA], [keyB, valueB]) => compare(keyA, keyB) || compare(valueA, valueB))
  const parameterString = params.map(([key, value]) => `${key}=${value}`).join('&')
  return [request.method.toUpperCase(), percentEncode(baseStringUri(request.url)), percentEncode(parameterString)].join('&')
}

/** Base64 of HMAC-SHA1 over the base string, keyed by the encoded consumer secret & encoded token secret. */
export function hmacSha1Signature(baseString: string, consumerSecret: string, tokenSecret: string): string {
  const key = `${percentEncode(consumerSecret)}&${percentEncode(tokenSecret)}`
  return createHmac('sha1', key).update(baseString, 'utf8').digest('base64')
}

/** The seven oauth_* values for one request, signature included. */
export function oauth1Params(request: SignableRequest, credentials: OAuth1Credentials, nonce: string, timestamp: number): Record<string, string> {
  const params: Record<string, string> = {
    oauth_consumer_key: credentials.consumerKey,
    oauth_nonce: nonce,
    oauth_signature_method: 'HMAC-SHA1',
    oauth_timestamp: String(timestamp),
    oauth_token: credentials.token,
    oauth_version: '1.0',
  }
  const signature = hmacSha1Signature(signatureBaseString(request, params), credentials.consumerSecret, credentials.tokenSecret)
  return { ...params, oauth_signature: signature }
}

/** `OAuth k="v", ...`, keys in alphabetical order and values percent-encoded, as X's documentation builds it. */
export function oauth1Header(request: SignableRequest, credentials: OAuth1Credentials, nonce: string, timestamp: number): string {
  const params = oauth1Params(request, credentials, nonce, timestamp)
  const pairs = Object.keys(params).sort().map((key) => `${percentEncode(key)}="${percentEncode(params[key]!)}"`)
  return `OAuth ${pairs.join(', ')}`
}

/** 32 random bytes as base64 with non-word characters removed, the way X's example nonce was made. */
export function createNonce(): string {
  return randomBytes(32).toString('base64').replace(/\W/g, '')
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * A fake OAuth 2.0 authorization server as RFC 6749 and the vendors' pages describe it (plugins/dashboard/connect/README.md):
 * GET <authorizePath> checks the client and its registered redirect URI, then redirects back with a code and the
 * state (or `error=access_denied` when the owner declines); POST <tokenPath> exchanges a code once, checking the
 * client's secret (form or Basic), the redirect URI and the PKCE verifier (S256), with the error bodies vendors send:
 * invalid_client, invalid_grant (used, unknown or expired code; a verifier that does not match), redirect_uri_mismatch.
 * Each vendor's fake mounts it beside its listing endpoints.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { FakeReply, RecordedRequest } from '../server.ts'

export interface AuthorizationServerInit {
  clientId: string
  clientSecret: string
  redirectUris: string[]
  authorizePath: string
  tokenPath: string
  /** How the code comes back: `code` (RFC 6749) or TikTok's `auth_code`. */
  codeParam?: string
  /** The id parameter of the authorization URL: `client_id`, or TikTok's `app_id`. */
  clientIdParam?: string
  /** The token request's body: a form (RFC 6749) or JSON (TikTok). */
  tokenBody?: 'form' | 'json'
  /** The token answer for a good exchange (access and refresh tokens are filled in). */
  tokenAnswer?: (tokens: { accessToken: string, refreshToken: string }) => unknown
  /** The error body for an OAuth error code (a vendor's own envelope); default `{ error, error_description }`. */
  errorBody?: (error: string, description: string) => unknown
  /** The HTTP status of a token error, when the vendor's is fixed (TikTok answers 200 with a code in the body). */
  errorStatus?: number
  /** The refresh token every exchange issues, when another fake must know it (default: a new random one each time). */
  refreshToken?: string
}

interface IssuedCode { redirectUri: string, challenge?: string, used: boolean }

export function createAuthorizationServer(init: AuthorizationServerInit) {
  const codes = new Map<string, IssuedCode>()
  const tokens = new Set<string>()
  const revoked: string[] = []
  const state = { decline: false }
  const error = (status: number, code: string, description: string): FakeReply =>
    ({ status: init.errorStatus ?? status, body: init.errorBody?.(code, description) ?? { error: code, error_description: description } })

  const authorize = (url: URL): FakeReply => {
    const q = url.searchParams
    if (q.get(init.clientIdParam ?? 'client_id') !== init.clientId) return error(401, 'invalid_client', 'The OAuth client was not found.')
    const redirectUri = q.get('redirect_uri') ?? ''
    if (!init.redirectUris.includes(redirectUri)) return error(400, 'redirect_uri_mismatch', 'The redirect URI in the request does not match the ones authorized for the OAuth client.')
    const back = new URL(redirectUri)
    back.searchParams.set('state', q.get('state') ?? '')
    if (state.decline) {
      back.searchParams.set('error', 'access_denied')
      back.searchParams.set('error_description', 'The user denied the request.')
    }
    else {
      const code = randomBytes(12).toString('hex')
      const challenge = q.get('code_challenge') ?? undefined
      if (challenge && q.get('code_challenge_method') !== 'S256') return error(400, 'invalid_request', 'code_challenge_method must be S256.')
      codes.set(code, { redirectUri, challenge, used: false })
      back.searchParams.set(init.codeParam ?? 'code', code)
    }
    return { status: 302, body: '', headers: { location: back.toString() } }
  }

  const token = (request: RecordedRequest): FakeReply => {
    const body: Record<string, string> = init.tokenBody === 'json'
      ? JSON.parse(request.body || '{}')
      : Object.fromEntries(new URLSearchParams(request.body))
    const basic = /^Basic (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1]
    const [basicId, basicSecret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : []
    const clientId = basicId ?? body.client_id ?? body.app_id
    const secret = basicSecret ?? body.client_secret ?? body.secret
    if (clientId !== init.clientId || secret !== init.clientSecret) return error(401, 'invalid_client', 'Client authentication failed.')
    const code = body.code ?? body.auth_code ?? ''
    const issued = codes.get(code)
    if (!issued || issued.used) return error(400, 'invalid_grant', 'Malformed auth code or the code was already used.')
    issued.used = true
    if (init.tokenBody !== 'json' && body.redirect_uri !== issued.redirectUri) return error(400, 'redirect_uri_mismatch', 'Bad Request')
    if (issued.challenge) {
      const verifier = body.code_verifier ?? ''
      if (createHash('sha256').update(verifier).digest('base64url') !== issued.challenge) return error(400, 'invalid_grant', 'Invalid code verifier.')
    }
    const issuedTokens = { accessToken: `at-${randomBytes(12).toString('hex')}`, refreshToken: init.refreshToken ?? `rt-${randomBytes(12).toString('hex')}` }
    tokens.add(issuedTokens.accessToken)
    tokens.add(issuedTokens.refreshToken)
    return { status: 200, body: init.tokenAnswer?.(issuedTokens) ?? { access_token: issuedTokens.accessToken, refresh_token: issuedTokens.refreshToken, expires_in: 3599, token_type: 'Bearer' } }
  }

  return {
    /** The owner declines on the consent page from now on. */
    decline: () => void (state.decline = true),
    /** Tokens the server issued and has not revoked. */
    isLive: (value: string) => tokens.has(value),
    revoked,
    revoke(value: string): boolean {
      if (!tokens.delete(value)) return false
      revoked.push(value)
      return true
    },
    /** Answers the authorization and token requests; undefined for any other path. */
    handle(request: RecordedRequest): FakeReply | undefined {
      const url = new URL(request.path, 'http://fake')
      if (request.method === 'GET' && url.pathname === init.authorizePath) return authorize(url)
      if (request.method === 'POST' && url.pathname === init.tokenPath) return token(request)
      return undefined
    },
  }
}

export type AuthorizationServer = ReturnType<typeof createAuthorizationServer>

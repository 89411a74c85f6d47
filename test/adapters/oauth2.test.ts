/**
 * The shared OAuth 2.0 refresh-token helper against a loopback token endpoint: what it sends, what it caches and for
 * how long, what it returns when the server rotates the refresh token, and how refusals are classified. Each
 * adapter's own texts are checked in its test (google-ads, linkedin, crm/salesforce).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OAuth2Error, resolveAccessToken, tokenCacheKey, type TokenPolicy } from '../../adapters/shared/oauth2.ts'
import { memoryCache } from '../contract/crm-poller.ts'
import { startFakeServer, type FakeReply, type FakeServer } from '../fakes/server.ts'

const GRANT = { clientId: 'client-1', clientSecret: 'secret-1', refreshToken: 'refresh-1' }
let server: FakeServer
let reply: FakeReply
const forms = () => server.requests.map((request) => Object.fromEntries(new URLSearchParams(request.body)))

beforeEach(async () => {
  reply = { status: 200, body: { access_token: 'access-1', expires_in: 3600, token_type: 'Bearer' } }
  server = await startFakeServer(() => reply)
})
afterEach(() => server.close())

function resolve(overrides: Partial<TokenPolicy> = {}, cache = memoryCache(), grant: Partial<typeof GRANT> = {}, signal = AbortSignal.timeout(5_000)) {
  const policy: TokenPolicy = { vendor: 'Acme', cacheKey: tokenCacheKey('acme:token', GRANT.clientId, GRANT.refreshToken), marginSeconds: 60, ...overrides }
  return resolveAccessToken({ tokenUrl: `${server.url}/token`, ...GRANT, ...grant }, { fetch, cache, signal }, policy)
}

describe('resolveAccessToken', () => {
  it('posts the refresh_token grant with client_secret_post, then serves the cached token until expires_in less the margin', async () => {
    const cache = memoryCache()
    expect(await resolve({}, cache)).toEqual({ accessToken: 'access-1', fields: {} })
    expect(forms()).toEqual([{ grant_type: 'refresh_token', refresh_token: 'refresh-1', client_id: 'client-1', client_secret: 'secret-1' }])
    expect(server.requests[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(await resolve({}, cache)).toEqual({ accessToken: 'access-1', fields: {} })
    expect(server.requests).toHaveLength(1)
    const [key, entry] = [...cache.entries][0]!
    expect(entry).toEqual({ value: 'access-1', ttlSeconds: 3600 - 60 })
    for (const secret of Object.values(GRANT)) expect(key).not.toContain(secret)
  })

  it('leaves client_secret out when the client has none, and renews when asked although a token is cached', async () => {
    const cache = memoryCache()
    await resolve({}, cache, { clientSecret: undefined })
    expect(forms()[0]).not.toHaveProperty('client_secret')
    await resolve({ renew: true }, cache)
    expect(server.requests).toHaveLength(2)
  })

  it('caches nothing when the token lives no longer than the margin, or names no lifetime without a fallback', async () => {
    const cache = memoryCache()
    reply = { status: 200, body: { access_token: 'short', expires_in: 30 } }
    await resolve({}, cache)
    reply = { status: 200, body: { access_token: 'ageless' } }
    await resolve({}, cache)
    expect(cache.entries.size).toBe(0)
    await resolve({ fallbackLifetimeSeconds: 1800 }, cache)
    expect([...cache.entries.values()]).toEqual([{ value: 'ageless', ttlSeconds: 1800 }])
  })

  it('keeps the fields asked for beside the token, cached as JSON, and refuses an answer without one', async () => {
    const cache = memoryCache()
    const keep = { instanceUrl: 'instance_url' }
    reply = { status: 200, body: { access_token: 'access-2', instance_url: 'https://acme.example.test' } }
    expect(await resolve({ keep, fallbackLifetimeSeconds: 60 }, cache)).toEqual({ accessToken: 'access-2', fields: { instanceUrl: 'https://acme.example.test' } })
    expect(JSON.parse([...cache.entries.values()][0]!.value)).toEqual({ accessToken: 'access-2', instanceUrl: 'https://acme.example.test' })
    expect(await resolve({ keep }, cache)).toEqual({ accessToken: 'access-2', fields: { instanceUrl: 'https://acme.example.test' } })
    expect(server.requests).toHaveLength(1)
    reply = { status: 200, body: { access_token: 'access-3' } }
    expect(await resolve({ keep, renew: true }, cache).catch((error: unknown) => error)).toMatchObject({ status: 200, message: expect.stringContaining('without an access token') })
  })

  it('returns a rotated refresh token, and none when the server sends the same one back', async () => {
    reply = { status: 200, body: { access_token: 'access-4', expires_in: 3600, refresh_token: 'refresh-2' } }
    expect(await resolve()).toEqual({ accessToken: 'access-4', fields: {}, rotatedRefreshToken: 'refresh-2' })
    reply = { status: 200, body: { access_token: 'access-5', expires_in: 3600, refresh_token: 'refresh-1' } }
    expect(await resolve()).toEqual({ accessToken: 'access-5', fields: {} })
  })

  it('runs the check before caching, so a refused token is not served later', async () => {
    const cache = memoryCache()
    const check = () => {
      throw new OAuth2Error('wrong scope', { status: 200, retryable: false })
    }
    await expect(resolve({ check }, cache)).rejects.toThrow('wrong scope')
    expect(cache.entries.size).toBe(0)
  })
})

describe('resolveAccessToken failures', () => {
  class AcmeOAuthError extends OAuth2Error {
    override name = 'AcmeOAuthError'
  }

  it('an OAuth refusal names the code, the description and the hint; it needs the operator, so it is not retryable', async () => {
    reply = { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } }
    const error = await resolve({ hint: (code) => (code === 'invalid_grant' ? 'authorize again' : undefined), errorClass: AcmeOAuthError }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AcmeOAuthError)
    expect(error).toMatchObject({ name: 'AcmeOAuthError', status: 400, retryable: false, code: 'invalid_grant', message: 'Acme OAuth refused the refresh token with invalid_grant: Token has been expired or revoked. (authorize again)' })
    for (const secret of Object.values(GRANT)) expect((error as Error).message).not.toContain(secret)
  })

  it('an OAuth description over several lines (Microsoft adds trace ids) is one line in the message', async () => {
    reply = { status: 400, body: { error: 'invalid_grant', error_description: 'AADSTS700082: The refresh token has expired.\r\nTrace ID: 1\r\nCorrelation ID: 2' } }
    const error = await resolve({}).catch((caught: unknown) => caught) as Error
    expect(error.message).toBe('Acme OAuth refused the refresh token with invalid_grant: AADSTS700082: The refresh token has expired. Trace ID: 1 Correlation ID: 2')
  })

  it('a server failure or throttling without an OAuth body is retryable and quotes the body', async () => {
    reply = { status: 503, body: '<html>Service  Unavailable</html>', headers: { 'content-type': 'text/html' } }
    expect(await resolve().catch((caught: unknown) => caught)).toMatchObject({ status: 503, retryable: true, message: 'Acme OAuth answered HTTP 503 without an access token: <html>Service Unavailable</html>' })
    reply = { status: 429, body: { error: 'rate_limited' }, headers: { 'retry-after': '7' } }
    const throttled = await resolve().catch((caught: unknown) => caught) as OAuth2Error
    expect(throttled).toMatchObject({ status: 429, retryable: true, code: 'rate_limited' })
    expect(throttled.answer!.headers.get('retry-after')).toBe('7')
  })

  it('no answer (nothing listens) is retryable; an abort keeps its cause', async () => {
    const unreachable = await resolveAccessToken({ tokenUrl: 'http://127.0.0.1:9/token', ...GRANT }, { fetch, cache: memoryCache(), signal: AbortSignal.timeout(5_000) }, { vendor: 'Acme', cacheKey: 'k', marginSeconds: 0 }).catch((caught: unknown) => caught)
    expect(unreachable).toMatchObject({ status: null, retryable: true, message: expect.stringMatching(/^Acme OAuth token request to http:\/\/127\.0\.0\.1:9\/token failed: /) })
    const controller = new AbortController()
    controller.abort()
    const aborted = await resolve({}, memoryCache(), {}, controller.signal).catch((caught: unknown) => caught) as OAuth2Error
    expect(aborted).toMatchObject({ status: null, retryable: true })
    expect((aborted.cause as Error).name).toBe('AbortError')
  })
})

import { createServer } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { dispatch } from '../../core/delivery/dispatch.ts'
import { defineAdPlatform, type AdPlatformDefinition } from '../../core/registry.ts'
import { purchaseFixture } from '../contract/fixtures.ts'
import { startFakeServer } from '../fakes/server.ts'
import { testPlatform } from './test-platform.ts'

const fake = await startFakeServer(async (request) => {
  if (request.path === '/slow/v1/events') await new Promise((resolve) => setTimeout(resolve, 500))
  return request.headers.authorization === 'Bearer good'
    ? { status: 200, body: { received: 1 }, headers: { 'set-cookie': 'a=1', 'x-trace': 'abc' } }
    : { status: 401, body: { message: 'Invalid access token' } }
})
afterAll(() => fake.close())

const noCache = { get: async () => null, set: async () => {} }
const event = purchaseFixture()
const asAny = (platform: AdPlatformDefinition<any>) => platform as AdPlatformDefinition<unknown>
const send = (options: unknown, timeoutMs = 2000) => dispatch(asAny(testPlatform), options, [event], { cache: noCache, timeoutMs })

/** A port nothing listens on: bind one, note it, close it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('dispatch: one call to one platform', () => {
  it('sends the mapped request and classifies the answer', async () => {
    const result = await send({ baseUrl: fake.url, token: 'good' })
    expect(result).toMatchObject({ outcomes: [{ status: 'sent' }], httpStatus: 200, durationMs: expect.any(Number) })
    expect(JSON.parse(fake.requests.at(-1)!.body)).toMatchObject({ events: [{ id: event.messageId }] })
  })

  it('a platform that does not answer within the timeout → retry, saying so', async () => {
    const result = await send({ baseUrl: `${fake.url}/slow`, token: 'good' }, 100)
    expect(result).toMatchObject({ outcomes: [{ status: 'retry', message: 'no answer within 100 ms' }], httpStatus: null })
  })

  it('a platform that cannot be reached → retry, naming the connection error', async () => {
    const result = await send({ baseUrl: `http://127.0.0.1:${await closedPort()}`, token: 'good' })
    expect(result.outcomes[0]).toMatchObject({ status: 'retry', message: expect.stringMatching(/^connection failed: .*ECONNREFUSED/) })
  })

  it('an authorize step that fails is retried, unless the adapter marks it as needing the operator', async () => {
    const withAuth = (error: Error) => defineAdPlatform({
      ...testPlatform,
      options: v.any(),
      authorize: async () => {
        throw error
      },
    })
    const temporary = await dispatch(asAny(withAuth(new Error('token endpoint busy'))), { baseUrl: fake.url, token: 'good' }, [event], { cache: noCache, timeoutMs: 2000 })
    expect(temporary.outcomes[0]).toEqual({ status: 'retry', message: 'authorization failed: token endpoint busy' })
    const revoked = Object.assign(new Error('invalid_grant: refresh token revoked'), { retryable: false })
    const permanent = await dispatch(asAny(withAuth(revoked)), { baseUrl: fake.url, token: 'good' }, [event], { cache: noCache, timeoutMs: 2000 })
    expect(permanent.outcomes[0]).toEqual({ status: 'rejected', message: 'authorization failed: invalid_grant: refresh token revoked' })
  })

  it('a 401 after a cached token fetches a fresh one and tries once more', async () => {
    const tokens: string[] = []
    const platform = defineAdPlatform({
      ...testPlatform,
      options: v.any(),
      authorize: async (_options, ctx) => {
        const token = (await ctx.cache.get('token')) ?? 'good'
        tokens.push(token)
        return { authorization: `Bearer ${token}` }
      },
      toRequest: (events, options) => ({ ...testPlatform.toRequest(events, options as never), headers: { 'content-type': 'application/json' } }),
    })
    const stale = { get: async () => 'revoked', set: async () => {} }
    const result = await dispatch(asAny(platform), { baseUrl: fake.url, token: 'unused' }, [event], { cache: stale, timeoutMs: 2000 })
    expect(tokens).toEqual(['revoked', 'good'])
    expect(result).toMatchObject({ outcomes: [{ status: 'sent' }], httpStatus: 200 })
  })
})

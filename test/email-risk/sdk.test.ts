import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { serve } from 'h3'
import type { Server } from 'srvx'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DCService, DCServiceAbortError, DCServiceBaseError, DCServiceError, DCServiceNetworkError, DCServiceTimeoutError, DCServiceValidationError, SDK_VERSION,
} from '../../plugins/email-risk/sdk/src/index.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { startWorld, type EmailRiskWorld } from './support.ts'

let world: EmailRiskWorld
let server: Server
let baseUrl: string
/** Answers after 2 s: for timeouts and aborts. */
let slow: FakeServer

beforeAll(async () => {
  world = await startWorld({ capture: false, config: { sites: [{ id: 'demo', name: 'Demo', plan: 'free' }, { id: 'spent', name: 'Spent', plan: 'free' }] } })
  server = serve(world.app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
  await server.ready()
  baseUrl = server.url!.replace(/\/$/, '')
  slow = await startFakeServer(async () => {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    return { status: 200, body: { success: true, data: {} } }
  })
})
afterAll(async () => {
  await server?.close(true)
  await slow?.close()
  await world?.close()
})

describe('DCService against a dcgate server on a socket', () => {
  it('returns the verdict and the typo fix: john.doe@gmial.com → gmail.com', async () => {
    const result = await new DCService({ apiKey: world.key, baseUrl }).checkEmail('john.doe@gmial.com')
    expect(Object.keys(result).sort()).toEqual(['emailInfo', 'userInfo'])
    expect(result.emailInfo.suggestion).toBe('john.doe@gmail.com')
    expect(result.emailInfo.action).toBe('CHALLENGE')
    expect(result.userInfo).toBeNull()
  })

  it('answers a disposable address BLOCK with its reason, then from storage with userInfo', async () => {
    const dc = new DCService({ apiKey: world.key, baseUrl, timeout: 5000 })
    const first = await dc.checkEmail('  Burner.Account@Mailinator.com ')
    expect(first.emailInfo).toMatchObject({ action: 'BLOCK', normalized_email: 'burner.account@mailinator.com', fraud_signals: { disposable_domain: true } })
    expect(first.emailInfo.reasons).toContain('mailinator.com is a disposable (throwaway) email service')
    const again = await dc.checkEmail('burner.account@mailinator.com')
    expect(again.emailInfo.answered_from).toBe('stored')
    expect(again.userInfo).toMatchObject({ source: 'server_sdk', related_emails: [] })
  })

  it('validates the email before any request: DCServiceValidationError, nothing sent', async () => {
    const recorder = await startFakeServer(() => ({ status: 500, body: {} }))
    const dc = new DCService({ apiKey: world.key, baseUrl: recorder.url })
    for (const email of ['', '   ', 'not-an-email', 'a@b', 'two@@example.com', `${'x'.repeat(65)}@example.com`, 42 as unknown as string]) {
      await expect(dc.checkEmail(email), String(email)).rejects.toBeInstanceOf(DCServiceValidationError)
    }
    expect(recorder.requests).toHaveLength(0)
    await recorder.close()
    expect(() => new DCService({ apiKey: '' })).toThrow(DCServiceValidationError)
    expect(() => new DCService({ apiKey: 'k', baseUrl: 'ftp://x' })).toThrow(DCServiceValidationError)
  })

  it('raises DCServiceError with the status and body of an API error (bad key)', async () => {
    const error = await new DCService({ apiKey: 'dc_live_not_a_real_key_0000000000', baseUrl }).checkEmail('anna@gmail.com').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DCServiceError)
    expect(error).toBeInstanceOf(DCServiceBaseError)
    expect(error).toMatchObject({ status: 401, body: { message: 'Invalid API key' }, code: 'API', name: 'DCServiceError' })
  })

  it('raises DCServiceError 429 on the 501st check of a free site', async () => {
    const key = await world.app.createKey('spent')
    await world.app.dcgate.context.orm.em.getConnection().execute(`insert into email_check_quotas (site_id, checks, billable) values ('spent', 500, 0)`)
    const error = await new DCService({ apiKey: key, baseUrl }).checkEmail('lena@gmail.com').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DCServiceError)
    expect(error).toMatchObject({ status: 429, body: { code: 'EMAIL_CHECK_QUOTA_EXCEEDED' } })
  })

  it('raises DCServiceTimeoutError when no answer comes within the timeout', async () => {
    const started = Date.now()
    const error = await new DCService({ apiKey: 'k', baseUrl: slow.url, timeout: 200 }).checkEmail('anna@gmail.com').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DCServiceTimeoutError)
    expect(error).toMatchObject({ timeout: 200, code: 'TIMEOUT' })
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it('raises DCServiceAbortError when the caller aborts, before or during the request', async () => {
    const dc = new DCService({ apiKey: 'k', baseUrl: slow.url })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('user left the page')), 100)
    await expect(dc.checkEmail('anna@gmail.com', { signal: controller.signal })).rejects.toBeInstanceOf(DCServiceAbortError)
    const sent = slow.requests.length
    await expect(dc.checkEmail('anna@gmail.com', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(DCServiceAbortError)
    expect(slow.requests.length).toBe(sent)
  })

  it('raises DCServiceNetworkError when nothing listens', async () => {
    const error = await new DCService({ apiKey: 'k', baseUrl: `http://127.0.0.1:${await closedPort()}` }).checkEmail('anna@gmail.com').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DCServiceNetworkError)
    expect((error as Error).message).toMatch(/ECONNREFUSED/)
  })

  it('is a publishable package: ESM with types, Node >= 18, no runtime dependencies, versions in step', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../plugins/email-risk/sdk/package.json', import.meta.url), 'utf8')) as Record<string, unknown>
    expect(pkg).toMatchObject({ type: 'module', engines: { node: '>=18' }, exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } })
    expect(pkg.dependencies).toBeUndefined()
    expect(pkg.version).toBe(SDK_VERSION)
  })
})

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

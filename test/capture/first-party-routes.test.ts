import { randomBytes } from 'node:crypto'
import { serve } from 'h3'
import type { Server } from 'srvx'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAdminClient } from '../../core/cli/admin-client.ts'
import { verifyDomainCommand } from '../../core/cli/commands/verify-domain.ts'
import { CliError, createOutput } from '../../core/cli/output.ts'
import { definePlugin } from '../../core/plugin.ts'
import { cookieDomain, firstPartyCookie, verifiedFirstPartyHost } from '../../plugins/capture/first-party/cookie.ts'
import { installFirstParty } from '../../plugins/capture/first-party/install.ts'
import type { FirstPartyChecker } from '../../plugins/capture/first-party/state.ts'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

const SCRIPT_HOST = 'scripts.dcgate.test'
// A fresh label per run: with Redis, stored verdicts outlive the test.
const label = `t${randomBytes(4).toString('hex')}`
const GOOD = `${label}.shop.test`
const BAD = `${label}.other.test`

let dns: FakeDns
let app: TestApp
let checker: FirstPartyChecker

/** Stands in for the capture plugin: installs first-party serving and a route that sets the cookie. */
const capture = definePlugin({
  name: 'first-party-test',
  setup(ctx) {
    checker = installFirstParty(ctx, ctx.config.capture)
    ctx.routes.add({
      method: 'POST', path: '/test/collect/:site', auth: 'none', summary: 'Sets the first-party cookie like /collect would',
      handler: (event) => {
        const site = ctx.sites.byId(event.context.params!.site!)!
        const cookie = firstPartyCookie(event, verifiedFirstPartyHost(checker, site), new URL(event.req.url).searchParams.get('vid') ?? undefined)
        if (cookie) event.res.headers.append('set-cookie', cookie)
        return { ok: true }
      },
    })
  },
})

beforeAll(async () => {
  dns = await startFakeDns({
    [SCRIPT_HOST]: { A: ['203.0.113.10'] },
    [GOOD]: { CNAME: SCRIPT_HOST },
    [BAD]: { CNAME: 'elsewhere.test' },
  })
  app = await bootTestApp({
    plugins: [capture],
    capture: { dnsServers: [dns.server], scriptHost: SCRIPT_HOST },
    sites: [
      { id: 'shop', name: 'Shop', domains: ['shop.test'], firstPartyHost: GOOD },
      { id: 'other', name: 'Other', firstPartyHost: BAD },
      { id: 'plain', name: 'Plain' },
    ],
  })
  await checker.start() // the round app:ready began
})
afterAll(async () => {
  await Promise.all([GOOD, BAD].map((host) => app?.dcgate.storage.removeItem(`first-party:${host}`)))
  await app?.close()
  await dns?.close()
})

const ask = (domain?: string) => app.request(`/tls/ask${domain === undefined ? '' : `?domain=${encodeURIComponent(domain)}`}`)

describe('GET /tls/ask (Caddy on-demand TLS)', () => {
  it('answers 200 for a verified first-party host, however it is spelt, and for the script host', async () => {
    for (const domain of [GOOD, GOOD.toUpperCase(), `${GOOD}.`, SCRIPT_HOST]) {
      const response = await ask(domain)
      expect(response.status, domain).toBe(200)
    }
    expect(await (await ask(GOOD)).json()).toEqual({ domain: GOOD, allowed: true })
  })

  it('answers 404 for an unverified host and a host no site names, 400 without a domain', async () => {
    expect((await ask(BAD)).status).toBe(404)
    const unknown = await ask('evil.example')
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ message: 'evil.example is not a verified first-party host' })
    expect((await ask()).status).toBe(400)
  })

  it('is in the OpenAPI document', async () => {
    const spec = await (await app.request('/openapi.json')).json() as { paths: Record<string, unknown> }
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/tls/ask', '/admin/api/sites/{id}/verify-domain']))
  })
})

describe('POST /admin/api/sites/:id/verify-domain', () => {
  it('answers the reason and the record to create for a host that is not verified', async () => {
    const response = await app.admin('POST', '/sites/other/verify-domain')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      site_id: 'other', host: BAD, verified: false, target: 'elsewhere.test',
      reason: `CNAME points to elsewhere.test, expected ${SCRIPT_HOST}`, temporary: false,
      checked_at: expect.any(String), verified_at: null, script_host: SCRIPT_HOST,
      record: { name: BAD, type: 'CNAME', value: SCRIPT_HOST },
    })
  })

  it('checks now: once the record is fixed, the host is verified, stored, and /tls/ask allows it', async () => {
    dns.set(BAD, { CNAME: SCRIPT_HOST })
    try {
      const response = await app.admin('POST', '/sites/other/verify-domain')
      expect(await response.json()).toMatchObject({ verified: true, target: SCRIPT_HOST, reason: null, verified_at: expect.any(String) })
      expect(await app.dcgate.storage.getItem(`first-party:${BAD}`)).toMatchObject({ verified: true, siteId: 'other' })
      expect((await ask(BAD)).status).toBe(200)
      expect(checker.isVerified(BAD)).toBe(true)
    }
    finally {
      dns.set(BAD, { CNAME: 'elsewhere.test' })
      await app.admin('POST', '/sites/other/verify-domain')
    }
  })

  it('answers 404 for an unknown site, 409 for a site without firstPartyHost, 401 without the admin token', async () => {
    const unknown = await app.admin('POST', '/sites/nope/verify-domain')
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ message: 'Unknown site "nope"; configured sites: shop, other, plain' })
    const plain = await app.admin('POST', '/sites/plain/verify-domain')
    expect(plain.status).toBe(409)
    expect(await plain.json()).toEqual({ message: expect.stringMatching(/^Site "plain" has no firstPartyHost/) })
    expect((await app.request('/admin/api/sites/shop/verify-domain', { method: 'POST' })).status).toBe(401)
  })
})

describe('the first-party visitor cookie', () => {
  const collect = (site: string, host: string, headers: Record<string, string> = {}, query = '') =>
    app.request(`/test/collect/${site}${query}`, { method: 'POST', headers: { host, ...headers } })

  it('is set on the verified first-party host: dc_vid, 400 days, parent domain, HttpOnly, Secure, SameSite=Lax', async () => {
    const cookie = (await collect('shop', GOOD)).headers.get('set-cookie')
    expect(cookie).toMatch(/^dc_vid=[A-Za-z0-9_-]{22}; Max-Age=34560000; Domain=shop\.test; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
  })

  it('keeps the visitor id the request carries, or the one given', async () => {
    const kept = (await collect('shop', GOOD, { cookie: 'dc_vid=abcdefgh12345678' })).headers.get('set-cookie')
    expect(kept).toMatch(/^dc_vid=abcdefgh12345678;/)
    const given = (await collect('shop', GOOD, { cookie: 'dc_vid=abcdefgh12345678' }, '?vid=given_visitor_1')).headers.get('set-cookie')
    expect(given).toMatch(/^dc_vid=given_visitor_1;/)
    const malformed = (await collect('shop', GOOD, { cookie: 'dc_vid=bad;value' })).headers.get('set-cookie')
    expect(malformed).not.toContain('bad')
  })

  it('is not set on the shared script host, nor on a host that is not verified', async () => {
    expect((await collect('shop', SCRIPT_HOST)).headers.get('set-cookie')).toBeNull()
    expect((await collect('other', BAD)).headers.get('set-cookie')).toBeNull()
    expect((await collect('plain', GOOD)).headers.get('set-cookie')).toBeNull()
  })

  it('uses the parent domain unless that is a public suffix', () => {
    expect(cookieDomain('t.shop.example')).toBe('shop.example')
    expect(cookieDomain('t.eu.shop.example')).toBe('eu.shop.example')
    expect(cookieDomain('t.shop.co.uk')).toBe('shop.co.uk')
    expect(cookieDomain('shop.co.uk')).toBeUndefined()
    expect(cookieDomain('shop.example')).toBeUndefined()
  })
})

describe('dcgate sites verify-domain <site-id>', () => {
  let server: Server
  let stdout: string[]
  beforeAll(async () => {
    server = serve(app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
    await server.ready()
  })
  afterAll(() => server?.close(true))

  const run = async (args: string[], json = false): Promise<{ stdout: string, error?: CliError }> => {
    stdout = []
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout.push(String(chunk))
      return true
    })
    try {
      await verifyDomainCommand(createAdminClient(app.dcgate.config, server.url), createOutput(json), args)
      return { stdout: stdout.join('') }
    }
    catch (error) {
      if (!(error instanceof CliError)) throw error
      return { stdout: stdout.join(''), error }
    }
    finally {
      spy.mockRestore()
    }
  }

  it('prints a verified host and how the tag changes', async () => {
    const { stdout, error } = await run(['shop'])
    expect(error).toBeUndefined()
    expect(stdout).toContain(`${GOOD} is verified for site shop (points to ${SCRIPT_HOST}).`)
    expect(stdout).toContain(`Change the script tag's host to https://${GOOD}, keeping the cop_key.`)
  })

  it('exits 1 when not verified, after printing the reason and the exact record to create', async () => {
    const { stdout, error } = await run(['other'])
    expect(error).toMatchObject({ exitCode: 1, message: `${BAD} is not verified: CNAME points to elsewhere.test, expected ${SCRIPT_HOST}` })
    expect(stdout).toContain(`${BAD} is not verified for site other: CNAME points to elsewhere.test, expected ${SCRIPT_HOST}`)
    expect(stdout).toContain(`  ${BAD}.  CNAME  ${SCRIPT_HOST}.`)
    expect(stdout).toContain('DNS only')
  })

  it('prints the answer as JSON with --json, still exiting 1 when not verified', async () => {
    const verified = await run(['shop'], true)
    expect(JSON.parse(verified.stdout)).toMatchObject({ site_id: 'shop', host: GOOD, verified: true })
    const failed = await run(['other'], true)
    expect(JSON.parse(failed.stdout)).toMatchObject({ site_id: 'other', verified: false, record: { name: BAD, type: 'CNAME', value: SCRIPT_HOST } })
    expect(failed.error?.exitCode).toBe(1)
  })

  it('reports usage errors and the server\'s message for an unknown site', async () => {
    expect((await run([])).error).toMatchObject({ exitCode: 2, message: 'Usage: dcgate sites verify-domain <site-id>' })
    expect((await run(['nope'])).error).toMatchObject({ exitCode: 1, message: 'Unknown site "nope"; configured sites: shop, other, plain' })
  })
})

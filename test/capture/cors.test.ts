/**
 * CORS on the capture routes, as a browser sees it: which origins may post, and which answers it lets the page read
 * with credentials (cookies). Credentials go only to a site's own pages: its domains, or for a site without
 * domains, pages of the same site as its verified first-party host.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

const SCRIPT_HOST = 'scripts.dcgate.test'
// A fresh label per run: with Redis, stored first-party verdicts outlive the test.
const label = `t${randomBytes(4).toString('hex')}`
const FIRST_PARTY = `${label}.blog.test`
const KEYS = { shop: 'cop_cors_shop_0123456789', open: 'cop_cors_open_0123456789', blog: 'cop_cors_blog_0123456789' } as const

let dns: FakeDns
let app: TestApp

beforeAll(async () => {
  dns = await startFakeDns({ [SCRIPT_HOST]: { A: ['203.0.113.10'] }, [FIRST_PARTY]: { CNAME: SCRIPT_HOST } })
  app = await bootTestApp({
    plugins: ['capture'],
    capture: { flushIntervalMs: 20, dnsServers: [dns.server], scriptHost: SCRIPT_HOST },
    sites: [
      { id: 'shop', name: 'Shop', domains: ['shop.test'], copKey: KEYS.shop, consent: { banner: 'off' } },
      { id: 'open', name: 'No domains', copKey: KEYS.open, consent: { banner: 'off' } },
      { id: 'blog', name: 'No domains, a first-party host', copKey: KEYS.blog, firstPartyHost: FIRST_PARTY, consent: { banner: 'off' } },
    ],
  })
})
afterAll(async () => {
  await app?.dcgate.storage.removeItem(`first-party:${FIRST_PARTY}`)
  await app?.close()
  await dns?.close()
})

function collect(site: keyof typeof KEYS, origin?: string): Promise<Response> {
  return app.request(`/collect?cop_key=${KEYS[site]}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'x-forwarded-for': '73.162.0.1', ...(origin ? { origin } : {}) },
    body: JSON.stringify({ v: 1, hits: [{ t: 'pageview', ts: Date.now(), url: 'https://blog.test/' }] }),
  })
}

function preflight(site: keyof typeof KEYS, origin: string): Promise<Response> {
  return app.request(`/collect?cop_key=${KEYS[site]}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } })
}

const cors = (response: Response) => [response.status, response.headers.get('access-control-allow-origin'), response.headers.get('access-control-allow-credentials')]

describe('a site with domains', () => {
  it("takes its own pages, with credentials", async () => {
    expect(cors(await collect('shop', 'https://www.shop.test'))).toEqual([202, 'https://www.shop.test', 'true'])
    expect(cors(await preflight('shop', 'https://www.shop.test'))).toEqual([204, 'https://www.shop.test', 'true'])
  })

  it('refuses Origin null (a sandboxed frame, a file: page) and foreign origins, on the POST and its preflight', async () => {
    for (const origin of ['null', 'https://evil.test', 'https://shop.test.evil.test', 'file://', 'chrome-extension://abcdef']) {
      const posted = await collect('shop', origin)
      expect(cors(posted), origin).toEqual([403, null, null])
      expect(cors(await preflight('shop', origin)), origin).toEqual([403, null, null])
    }
    expect(await (await collect('shop', 'null')).json()).toEqual({ message: "Origin null is not one of the site's domains" })
  })

  it('answers a request without Origin (a server, sendBeacon from the same origin) without CORS headers', async () => {
    expect(cors(await collect('shop'))).toEqual([202, null, null])
  })
})

describe('a site without domains', () => {
  it('takes any origin, but never with credentials', async () => {
    for (const origin of ['https://anything.test', 'null']) {
      expect(cors(await collect('open', origin)), origin).toEqual([202, origin, null])
      expect(cors(await preflight('open', origin)), origin).toEqual([204, origin, null])
    }
  })

  it('gives credentials to pages of the same site as its verified first-party host, and to no other', async () => {
    // The checker's first round starts when the app is ready; until it verifies the host, no page gets credentials.
    await expect.poll(async () => (await collect('blog', 'https://www.blog.test')).headers.get('access-control-allow-credentials'), { timeout: 10_000 }).toBe('true')
    for (const origin of ['https://www.blog.test', 'https://blog.test', `https://${FIRST_PARTY}`]) {
      expect(cors(await collect('blog', origin)), origin).toEqual([202, origin, 'true'])
      expect(cors(await preflight('blog', origin)), origin).toEqual([204, origin, 'true'])
    }
    for (const origin of ['https://evil.test', 'https://blog.test.evil.test', 'null']) {
      expect(cors(await collect('blog', origin)), origin).toEqual([202, origin, null])
    }
  })
})

import { createContext, runInContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderScript } from '../../plugins/capture/script.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// Global Privacy Control (https://w3c.github.io/gpc/): a browser whose user opted out of the sale or sharing of their
// data sends `Sec-GPC: 1` with every request and shows `navigator.globalPrivacyControl === true`. The visit keeps it,
// so a conversion matched to the visit is sent with the platforms' limited-data-use signal (test/delivery/us-privacy).
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const WORKER_SECRET = 'worker-secret-0123456789abcdef'

let app: TestApp
let copKey: string

beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['capture'],
    server: { trustProxy: true },
    capture: { flushIntervalMs: 20 },
    sites: [{ id: 'shop', name: 'Shop', consent: { banner: 'off' }, capture: { workerSecret: WORKER_SECRET } }],
  })
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
})
afterAll(async () => {
  await app?.close()
})

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

function collect(sessionId: string, options: { header?: string, body?: Record<string, unknown>, path?: string } = {}) {
  return app.request(`${options.path ?? '/collect'}?cop_key=${copKey}`, {
    method: 'POST',
    headers: {
      'content-type': 'text/plain;charset=UTF-8', 'user-agent': CHROME, 'x-forwarded-for': '73.162.0.1',
      ...(options.header === undefined ? {} : { 'sec-gpc': options.header }),
      ...(options.path === '/collect/worker' ? { 'x-dc-worker-secret': WORKER_SECRET } : {}),
    },
    body: JSON.stringify({ v: 1, sid: sessionId, vid: `vis-${sessionId}`, hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }], ...options.body }),
  })
}

/** The visit's gpc once its hits are written. */
async function gpcOf(sessionId: string, pages = 1): Promise<boolean | undefined> {
  for (let i = 0; i < 100; i++) {
    const [row] = await sql<{ gpc: boolean, page_count: number }[]>('select gpc, page_count from visits where session_id = ?', [sessionId])
    if (row && row.page_count >= pages) return row.gpc
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return undefined
}

describe('the visit keeps Global Privacy Control', () => {
  it('from the Sec-GPC: 1 header of a hit', async () => {
    expect((await collect('sess-gpc-header', { header: '1' })).status).toBe(202)
    expect(await gpcOf('sess-gpc-header')).toBe(true)
  })

  it("from the body's gpc, which the script sends for navigator.globalPrivacyControl", async () => {
    expect((await collect('sess-gpc-body', { body: { gpc: true } })).status).toBe(202)
    expect(await gpcOf('sess-gpc-body')).toBe(true)
  })

  it('from a server-side worker forwarding the body', async () => {
    const response = await collect('sess-gpc-worker', { path: '/collect/worker', body: { gpc: true, ip: '73.162.0.2', userAgent: CHROME } })
    expect(response.status).toBe(202)
    expect(await gpcOf('sess-gpc-worker')).toBe(true)
  })

  it('not without the signal (no header, another header value, gpc false)', async () => {
    await collect('sess-no-gpc-1')
    await collect('sess-no-gpc-2', { header: '0' })
    await collect('sess-no-gpc-3', { body: { gpc: false } })
    expect([await gpcOf('sess-no-gpc-1'), await gpcOf('sess-no-gpc-2'), await gpcOf('sess-no-gpc-3')]).toEqual([false, false, false])
  })

  it('once seen, a later hit of the visit without it does not take it back', async () => {
    await collect('sess-gpc-stays', { header: '1' })
    expect(await gpcOf('sess-gpc-stays')).toBe(true)
    await collect('sess-gpc-stays')
    expect(await gpcOf('sess-gpc-stays', 2)).toBe(true)
  })

  it('refuses a gpc that is not a boolean, naming it', async () => {
    const response = await collect('sess-gpc-bad', { body: { gpc: 'yes' } })
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('gpc')
  })
})

/** What the script posts to /collect on a page whose navigator says `globalPrivacyControl` (a tiny fake browser). */
async function firstCollectBody(globalPrivacyControl: unknown): Promise<Record<string, unknown>> {
  const posted: Record<string, unknown>[] = []
  const timers: (() => void)[] = []
  const noop = () => undefined
  const window: Record<string, unknown> = {
    document: {
      title: 'Shop', referrer: '', visibilityState: 'visible', currentScript: null, cookie: '',
      getElementById: (id: string) => (id === 'dcgate-script' ? { src: 'https://t.example/script?cop_key=ck_1' } : null),
      querySelector: () => null, documentElement: { getAttribute: () => null }, addEventListener: noop,
      body: { prepend: noop }, createElement: () => ({ getContext: () => null }),
    },
    location: { href: 'https://shop.example/', search: '', protocol: 'https:', hostname: 'shop.example' },
    history: { pushState: noop, replaceState: noop },
    navigator: { userAgent: CHROME, language: 'en-US', languages: ['en-US'], plugins: { length: 3 }, webdriver: false, globalPrivacyControl },
    screen: { width: 1280, height: 800 },
    localStorage: { getItem: () => null, setItem: noop, removeItem: noop },
    fetch: async (_url: string, init: { body: string }) => {
      posted.push(JSON.parse(init.body) as Record<string, unknown>)
      return { ok: true, status: 202, json: async () => ({ ok: true, consent: { required: false, banner: 'off' } }) }
    },
    setTimeout: (fn: () => void) => timers.push(fn),
    clearTimeout: noop,
    addEventListener: noop,
    crypto: globalThis.crypto, performance, Intl, URL, URLSearchParams, Blob, TextEncoder,
    outerWidth: 1280, outerHeight: 800, devicePixelRatio: 1, chrome: {},
  }
  window.window = window
  runInContext((await renderScript({ forms: [], banner: 'off' })).body, createContext(window))
  for (const fn of timers.splice(0)) fn() // the batch's 1 s timer
  expect(posted).toHaveLength(1)
  return posted[0]!
}

describe('the tracking script', () => {
  it('sends gpc: true when navigator.globalPrivacyControl is true, and nothing otherwise', async () => {
    expect(await firstCollectBody(true)).toMatchObject({ gpc: true })
    for (const value of [false, undefined, 'true']) expect(await firstCollectBody(value)).not.toHaveProperty('gpc')
  })
})

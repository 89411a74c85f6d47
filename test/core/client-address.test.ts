/**
 * The client address where a user observes it: the visit capture stores (its IP, country, Tor verdict) and the
 * deletion route's per-address limit. A client behind one trusted proxy writes a Tor exit as the leftmost
 * X-Forwarded-For entry; the proxy appends the address it really saw.
 */
import { serve } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ConfigInput } from '../../core/config/schema.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { bootDsarApp, copKey, publicRequest } from '../dsar/support.ts'

const TOR_EXIT = '93.95.230.253' // in plugins/capture/intel/data/tor-exits.txt
const UK_IP = '81.2.69.142' // in the United Kingdom in the bundled geo data
const COP_KEY = 'cop_client_address_0123456789'

type TrustProxy = NonNullable<NonNullable<ConfigInput['server']>['trustProxy']>

let n = 0
const sid = () => `addr${String(++n).padStart(8, '0')}x${Date.now()}`

async function bootCapture(trustProxy: TrustProxy): Promise<TestApp> {
  return bootTestApp({
    plugins: ['capture'],
    server: { trustProxy },
    capture: { flushIntervalMs: 20 },
    sites: [{ id: 'shop', name: 'Shop', domains: ['shop.example'], copKey: COP_KEY, consent: { banner: 'off' } }],
  })
}

/** Sends one page view and returns the stored visit's address facts. */
async function visitOf(app: TestApp, send: (path: string, init: RequestInit) => Promise<Response>, forwardedFor: string) {
  const session = sid()
  const response = await send(`/collect?cop_key=${COP_KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ v: 1, sid: session, vid: `vid-${session}`, hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }] }),
  })
  expect(response.status).toBe(202)
  const read = () => app.dcgate.database.orm.em.getConnection().execute<{ ip_address: string | null, country: string | null, is_tor: boolean }[]>(
    'select ip_address, country, is_tor from visits where session_id = ?', [session])
  await expect.poll(async () => (await read()).length).toBe(1)
  return (await read())[0]
}

describe('capture behind one trusted proxy (trustProxy: true, in-process)', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await bootCapture(true)
  })
  afterAll(() => app?.close())

  it('stores the address the proxy appended, not the one the client wrote', async () => {
    const visit = await visitOf(app, app.request, `${TOR_EXIT}, ${UK_IP}`)
    expect(visit).toEqual({ ip_address: UK_IP, country: 'GB', is_tor: false })
  })

  it('believes a Tor exit only where the proxy saw it', async () => {
    expect(await visitOf(app, app.request, `${UK_IP}, ${TOR_EXIT}`)).toMatchObject({ ip_address: TOR_EXIT, is_tor: true })
  })
})

// Over a real socket from 127.0.0.1, served as startServer serves it (srvx, no srvx trustProxy).
describe.each<[string, TrustProxy, string]>([
  ['false ignores the header', false, '127.0.0.1'],
  ['1 hop takes the entry the proxy appended', 1, UK_IP],
  ['a CIDR list not naming the peer ignores the header', ['10.0.0.0/8'], '127.0.0.1'],
  ['a list naming the proxies skips each of them: the rightmost hop not named is the client', ['127.0.0.1', '198.51.100.0/24'], UK_IP],
])('capture with trustProxy %s', (_name, trustProxy, expected) => {
  let app: TestApp
  let server: ReturnType<typeof serve>
  let base: string
  beforeAll(async () => {
    app = await bootCapture(trustProxy)
    server = serve(app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
    await server.ready()
    base = `http://127.0.0.1:${(server.node!.server!.address() as { port: number }).port}`
  })
  afterAll(async () => {
    await server?.close(true)
    await app?.close()
  })

  it(`stores ${expected}`, async () => {
    const chain = Array.isArray(trustProxy) && trustProxy.includes('198.51.100.0/24') ? `${TOR_EXIT}, ${UK_IP}, 198.51.100.7` : `${TOR_EXIT}, ${UK_IP}`
    const visit = await visitOf(app, (path, init) => fetch(`${base}${path}`, init), chain)
    expect(visit).toMatchObject({ ip_address: expected, is_tor: false })
  })
})

describe('the deletion route limit behind one trusted proxy', () => {
  let app: TestApp
  beforeAll(async () => {
    app = await bootDsarApp(undefined)
  })
  afterAll(() => app?.close())

  it('counts the address the proxy appended: a new leftmost entry per request does not reset it', async () => {
    // A fresh address per run (benchmarking range, neither private nor loopback): Redis counts outlive a run.
    const bytes = crypto.getRandomValues(new Uint8Array(2))
    const real = `198.18.${bytes[0]}.${bytes[1]}`
    const spoofed = (i: number) => `203.0.113.${i}`
    for (let i = 0; i < 10; i++) {
      const answer = await publicRequest(app, { email: `spoof${i}@example.com`, cop_key: copKey(app, 'shop') }, `${spoofed(i)}, ${real}`)
      expect(answer.status).toBe(200)
    }
    const refused = await publicRequest(app, { email: 'spoof10@example.com', cop_key: copKey(app, 'shop') }, `${spoofed(10)}, ${real}`)
    expect(refused.status).toBe(429)
    // Another client behind the same proxy is not held back.
    const other = await publicRequest(app, { email: 'spoof11@example.com', cop_key: copKey(app, 'shop') }, `${spoofed(10)}, 198.19.${bytes[0]}.${bytes[1]}`)
    expect(other.status).toBe(200)
  })
})

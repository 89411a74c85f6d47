import { networkInterfaces } from 'node:os'
import { serve } from 'h3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { resolveClientIp, type TrustProxy } from '../../core/http/client-ip.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// A client behind Caddy sends `X-Forwarded-For: 6.6.6.6`; Caddy appends the address it saw, so dcgate receives
// `6.6.6.6, 81.2.69.142` from Caddy's own address. The client is 81.2.69.142, whatever it wrote.
const SPOOFED = '6.6.6.6'
const CLIENT = '81.2.69.142'

const resolve = (trust: TrustProxy, peer: string | undefined, forwardedFor?: string) => resolveClientIp(peer, forwardedFor, trust)

describe('the client address from the proxy chain', () => {
  it('trustProxy false: the TCP peer, whatever the header says', () => {
    expect(resolve(false, '203.0.113.7', `${SPOOFED}, ${CLIENT}`)).toBe('203.0.113.7')
    expect(resolve(false, '127.0.0.1', CLIENT)).toBe('127.0.0.1')
  })

  it('trustProxy true: behind a proxy on loopback or the private network, the rightmost hop that is not one', () => {
    expect(resolve(true, '127.0.0.1', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(true, '::1', CLIENT)).toBe(CLIENT)
    expect(resolve(true, '::ffff:127.0.0.1', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    // Caddy in Docker (172.18.0.2) behind a load balancer on the LAN (10.0.0.5): both skipped.
    expect(resolve(true, '172.18.0.2', `${SPOOFED}, ${CLIENT}, 10.0.0.5`)).toBe(CLIENT)
    expect(resolve(true, 'fd00::7', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    // A client claiming to be a proxy gains nothing: its claim sits left of the address the proxy appended.
    expect(resolve(true, '127.0.0.1', `127.0.0.1, ${CLIENT}`)).toBe(CLIENT)
    // No proxy header at all: the peer.
    expect(resolve(true, '127.0.0.1', undefined)).toBe('127.0.0.1')
  })

  it('trustProxy true: a peer on the internet is the client; its header is ignored', () => {
    expect(resolve(true, '203.0.113.7', `${SPOOFED}, ${CLIENT}`)).toBe('203.0.113.7')
    expect(resolve(true, '100.64.0.1', CLIENT)).toBe('100.64.0.1') // carrier-grade NAT is not a private network of ours
  })

  it('a hop count trusts that many proxies whatever their addresses (a cloud load balancer in front of Caddy)', () => {
    expect(resolve(1, '203.0.113.7', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(2, '203.0.113.7', `${SPOOFED}, ${CLIENT}, 198.51.100.4`)).toBe(CLIENT)
    expect(resolve(2, '203.0.113.7', `${SPOOFED}, 7.7.7.7, ${CLIENT}, 198.51.100.4`)).toBe(CLIENT)
    // Fewer entries than hops: the leftmost a proxy wrote; none at all: the peer.
    expect(resolve(3, '203.0.113.7', CLIENT)).toBe(CLIENT)
    expect(resolve(1, '203.0.113.7', undefined)).toBe('203.0.113.7')
  })

  it('a list of addresses and CIDRs trusts those proxies only', () => {
    const trust = ['198.51.100.0/24', '2001:db8:ffff::/48', 'loopback']
    expect(resolve(trust, '198.51.100.9', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(trust, '198.51.100.9', `${SPOOFED}, ${CLIENT}, 198.51.100.20`)).toBe(CLIENT)
    expect(resolve(trust, '2001:db8:ffff::5', `${SPOOFED}, 2001:db8::1`)).toBe('2001:db8::1')
    expect(resolve(trust, '::1', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    // Not in the list: the peer is the client, and so is a private address the list does not name.
    expect(resolve(trust, '203.0.113.7', `${SPOOFED}, ${CLIENT}`)).toBe('203.0.113.7')
    expect(resolve(trust, '10.0.0.5', CLIENT)).toBe('10.0.0.5')
    expect(resolve(['203.0.113.7'], '203.0.113.7', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(['private'], '192.168.1.2', `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(['private'], '127.0.0.1', `${SPOOFED}, ${CLIENT}`)).toBe('127.0.0.1')
  })

  it('takes the forms proxies write (ports, brackets, IPv4-mapped, spaces) and stores plain addresses', () => {
    expect(resolve(true, '127.0.0.1', `${SPOOFED},${CLIENT}:51234`)).toBe(CLIENT)
    expect(resolve(true, '127.0.0.1', '[2001:db8::1]:443')).toBe('2001:db8::1')
    expect(resolve(true, '127.0.0.1', ' ::ffff:81.2.69.142 ')).toBe(CLIENT)
    expect(resolve(true, '127.0.0.1', '::FFFF:81.2.69.142')).toBe(CLIENT)
    expect(resolve(true, '127.0.0.1', '0:0:0:0:0:ffff:81.2.69.142')).toBe(CLIENT)
    expect(resolve(true, '127.0.0.1', '::ffff:5102:458e')).toBe(CLIENT)
    expect(resolve(true, '127.0.0.1', '2001:db8::1')).toBe('2001:db8::1')
  })

  it('never takes a value that is not an address: the walk stops at the last hop a trusted proxy vouched for', () => {
    expect(resolve(true, '127.0.0.1', `${CLIENT}, <script>`)).toBe('127.0.0.1')
    expect(resolve(true, '127.0.0.1', `${CLIENT}, unknown`)).toBe('127.0.0.1')
    expect(resolve(true, '127.0.0.1', `x${'9'.repeat(200)}`)).toBe('127.0.0.1')
    expect(resolve(true, '127.0.0.1', 'fe80::1%eth0')).toBe('127.0.0.1')
    expect(resolve(true, '127.0.0.1', `${'not-an-ip, '.repeat(3)}10.0.0.1, ${CLIENT}`)).toBe(CLIENT)
  })

  it('walks a bounded number of hops, so a header of thousands of trusted entries costs nothing', () => {
    const chain = Array.from({ length: 5000 }, () => '10.0.0.1').join(', ')
    const started = performance.now()
    expect(resolve(true, '127.0.0.1', `${SPOOFED}, ${chain}`)).toBe('10.0.0.1')
    expect(performance.now() - started).toBeLessThan(200)
  })

  it('a request made in-process (no socket) counts as coming from a trusted proxy', () => {
    expect(resolve(true, undefined, `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(1, undefined, `${SPOOFED}, ${CLIENT}`)).toBe(CLIENT)
    expect(resolve(false, undefined, CLIENT)).toBeUndefined()
  })
})

describe('server.trustProxy in the config', () => {
  const problems = (trustProxy: unknown): string[] => {
    try {
      resolveConfig({ server: { trustProxy } }, {})
    }
    catch (error) {
      if (error instanceof BootError) return error.details
      throw error
    }
    return []
  }

  it('takes true, false, a hop count and a list of addresses, CIDRs and range names', () => {
    for (const value of [true, false, 1, 3, ['10.0.0.0/8', '2001:db8::/32', '198.51.100.7', '::1', 'loopback', 'private']]) {
      expect(problems(value), JSON.stringify(value)).toEqual([])
    }
    expect(resolveConfig({}, {}).server.trustProxy).toBe(false)
  })

  it('names the path of a wrong value', () => {
    expect(problems(0)).toEqual(['server.trustProxy: must be at least 1 (false trusts no proxy)'])
    expect(problems(1.5)).toEqual(['server.trustProxy: must be a whole number of proxy hops'])
    expect(problems([])).toEqual(['server.trustProxy: must list at least one proxy (false trusts none)'])
    expect(problems('yes')).toEqual(['server.trustProxy: must be true, false, a number of proxy hops, or a list of proxy addresses and CIDRs'])
    expect(problems(['10.0.0.0/8', '10.0.0.0/33', 'lan', 'toString'])).toEqual([
      "server.trustProxy[1]: must be an IP address, a CIDR such as 10.0.0.0/8, or one of 'loopback', 'private'",
      "server.trustProxy[2]: must be an IP address, a CIDR such as 10.0.0.0/8, or one of 'loopback', 'private'",
      "server.trustProxy[3]: must be an IP address, a CIDR such as 10.0.0.0/8, or one of 'loopback', 'private'",
    ])
  })
})

// The machine's own address on a real interface: connecting to it gives a peer that is not loopback.
const outside = Object.values(networkInterfaces()).flat().find((info) => info && !info.internal && info.family === 'IPv4')?.address

describe('the admin API over a real socket', () => {
  let app: TestApp
  let server: ReturnType<typeof serve>
  let port: number
  beforeAll(async () => {
    app = await bootTestApp({ server: { trustProxy: true } })
    // As startServer serves it: srvx on every interface, no srvx trustProxy.
    server = serve(app.dcgate.app, { port: 0, hostname: '0.0.0.0', silent: true, gracefulShutdown: false })
    await server.ready()
    port = (server.node!.server!.address() as { port: number }).port
  })
  afterAll(async () => {
    await server?.close(true)
    await app?.close()
  })

  const sites = (host: string, headers: Record<string, string> = {}) =>
    fetch(`http://${host}:${port}/admin/api/sites`, { headers: { authorization: `Bearer ${app.dcgate.adminToken}`, ...headers } })

  it('answers on loopback', async () => {
    expect((await sites('127.0.0.1')).status).toBe(200)
  })

  it('refuses a request on loopback that carries a forwarding header, whatever address it names', async () => {
    for (const header of ['x-forwarded-for', 'x-real-ip']) expect((await sites('127.0.0.1', { [header]: '127.0.0.1' })).status).toBe(403)
    expect((await sites('127.0.0.1', { forwarded: 'for=127.0.0.1' })).status).toBe(403)
  })

  it.skipIf(!outside)('refuses a peer that is not loopback, with or without a header claiming loopback', async () => {
    expect((await sites(outside!)).status).toBe(403)
    const claimed = await sites(outside!, { 'x-forwarded-for': '127.0.0.1' })
    expect(claimed.status).toBe(403)
    expect(await claimed.json()).toEqual({ message: 'The admin API answers on loopback only (set admin.allowRemote to change this)' })
  })
})

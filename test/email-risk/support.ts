import { createSocket, type Socket } from 'node:dgram'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { startFakeDns, type DnsEntry, type FakeDns } from '../fakes/dns.ts'
import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { createEmailRiskPlugin } from '../../plugins/email-risk/index.ts'
import type { EmailRiskOptionsInput } from '../../plugins/email-risk/options.ts'
import type { ConfigInput } from '../../core/config/schema.ts'

export const COP_KEY = 'cop_emailrisk_0123456789'
const DAY = 86_400_000

/** Registration dates the fake RDAP server knows, by domain; `slow` answers after 2 s (past any test timeout). */
export function registeredDaysAgo(days: number): string {
  return new Date(Date.now() - days * DAY).toISOString()
}

/**
 * A fake RDAP server answering like rdap.org's registries: 200 with the RFC 9083 domain object and its
 * registration event, 404 with the RFC 9083 error body for a name it does not know.
 */
export async function startFakeRdap(domains: Record<string, string | 'slow' | 'no-date'>): Promise<FakeServer> {
  return startFakeServer(async (request) => {
    const name = decodeURIComponent(request.path.replace(/^\/domain\//, '')).toLowerCase()
    const entry = domains[name]
    if (entry === undefined || !request.path.startsWith('/domain/')) {
      return { status: 404, body: { errorCode: 404, title: 'Not Found', description: [`${name} is not registered here`] }, headers: { 'content-type': 'application/rdap+json' } }
    }
    if (entry === 'slow') await new Promise((resolve) => setTimeout(resolve, 2000))
    const events = entry === 'no-date' || entry === 'slow' ? [] : [{ eventAction: 'registration', eventDate: entry }, { eventAction: 'last changed', eventDate: new Date().toISOString() }]
    return {
      status: 200,
      headers: { 'content-type': 'application/rdap+json' },
      body: { objectClassName: 'domain', ldhName: name.toUpperCase(), status: ['active'], events, rdapConformance: ['rdap_level_0'] },
    }
  })
}

/** Mail domains for the fake DNS: an address (A) is an implicit MX; gmail.com is the resolver's canary. */
export const MAIL_DOMAINS: Record<string, DnsEntry> = {
  'gmail.com': { A: ['142.250.0.1'] },
  'northwind-traders.com': { A: ['198.51.100.10'] },
  'brand-new-shop.io': { A: ['198.51.100.11'] },
  'fresh-startup.dev': { A: ['198.51.100.12'] },
  'acme-corp.com': { A: ['198.51.100.13'] },
  // Not example.net: that one is reserved (RFC 2606), assessed without any lookup.
  'servfail.dns-trouble.net': { rcode: 'SERVFAIL' },
}

export const RDAP_DOMAINS: Record<string, string | 'slow' | 'no-date'> = {
  'northwind-traders.com': registeredDaysAgo(7000),
  'brand-new-shop.io': registeredDaysAgo(4),
  'fresh-startup.dev': registeredDaysAgo(95),
  'acme-corp.com': registeredDaysAgo(3650),
}

/** A UDP "DNS server" that never answers: every query runs into the timeout. */
export async function startSilentDns(): Promise<{ server: string, close: () => Promise<void> }> {
  const socket: Socket = createSocket('udp4')
  socket.on('message', () => {})
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return { server: `127.0.0.1:${socket.address().port}`, close: () => new Promise((resolve) => socket.close(() => resolve())) }
}

export interface EmailRiskWorld {
  app: TestApp
  key: string
  dns: FakeDns
  rdap: FakeServer
  check: (email: unknown, key?: string) => Promise<Response>
  close: () => Promise<void>
}

export interface WorldOptions {
  plan?: 'free' | 'business' | 'organization'
  capture?: boolean
  /** Kernel plugins loaded besides capture, e.g. `dsar` for erasures through the real route. */
  morePlugins?: string[]
  emailRisk?: EmailRiskOptionsInput
  config?: Partial<ConfigInput>
  /** The site's id (default `demo`): a test on Redis picks its own, so counters shared through Redis are its own. */
  siteId?: string
  /** More domains the fakes know, beside MAIL_DOMAINS and RDAP_DOMAINS (a test on Redis uses names no earlier run cached). */
  dnsDomains?: Record<string, DnsEntry>
  rdapDomains?: Record<string, string | 'slow' | 'no-date'>
}

/** dcgate with capture (unless `capture: false`) and email-risk (RDAP and DNS pointed at fakes), one site on `plan`, and a private key. */
export async function startWorld(options: WorldOptions = {}): Promise<EmailRiskWorld> {
  const dns = await startFakeDns({ ...MAIL_DOMAINS, ...options.dnsDomains })
  const rdap = await startFakeRdap({ ...RDAP_DOMAINS, ...options.rdapDomains })
  const plugin = createEmailRiskPlugin({ rdapUrl: rdap.url, dnsServers: [dns.server], timeoutMs: 3000, ...options.emailRisk })
  const siteId = options.siteId ?? 'demo'
  const app = await bootTestApp({
    plugins: [...(options.capture === false ? [] : ['capture']), ...(options.morePlugins ?? []), plugin],
    sites: [{ id: siteId, name: 'Demo', plan: options.plan ?? 'free', copKey: COP_KEY, consent: { banner: 'off' } }],
    ...options.config,
  })
  const key = await app.createKey(siteId)
  return {
    app, key, dns, rdap,
    check: (email, withKey = key) => app.request('/api/v1/services/email/check', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(withKey ? { 'x-dc-key': withKey } : {}) },
      body: JSON.stringify(email === undefined ? {} : { email }),
    }),
    async close() {
      await app.close()
      await dns.close()
      await rdap.close()
    },
  }
}

/** Identifies a visitor by email through the tracking script's /identify, with a device fingerprint. */
export async function identify(app: TestApp, email: string, session: { sid: string, vid: string, deviceHash?: string }): Promise<Response> {
  const device = session.deviceHash ? { hash: session.deviceHash, short: session.deviceHash.slice(0, 12), confidence: 0.92, version: 1 } : undefined
  return app.request(`/identify?cop_key=${COP_KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/140.0 Safari/537.36' },
    body: JSON.stringify({ v: 1, sid: session.sid, vid: session.vid, email, via: 'sdk', consent: 'granted', ...(device ? { device } : {}) }),
  })
}

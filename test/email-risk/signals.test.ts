import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { createTtlCache } from '../../plugins/email-risk/cache.ts'
import { isGibberish, readLocalPart } from '../../plugins/email-risk/signals/local-part.ts'
import { createMxLookup, type MailServer } from '../../plugins/email-risk/signals/mx.ts'
import { createRdapLookup, registrableDomain, type DomainAge } from '../../plugins/email-risk/signals/rdap.ts'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'
import type { FakeServer } from '../fakes/server.ts'
import { registeredDaysAgo, startFakeRdap, startSilentDns } from './support.ts'

describe('local part heuristics', () => {
  const names = [
    'john.doe', 'maria.garcia84', 'j.smith', 'anna-lena.mueller', 'xu.li', 'nguyen.thi.hoa', 'oksana.kovalchuk',
    'wojciech.szczepanski', 'bartholomew.schwarzkopf', 'siobhan.ni.bhriain', 'lars.hirschfeld', 'chrzczonowicz.k',
    'sean_obrien', 'rhythm.and.blues', 'dmitriy.kuznetsov', 'aaron1987', 'k.nakamura', 'ngozi.adeyemi', 'info', 'mk',
  ]
  it.each(names)('reads %s as a name', (local) => expect(isGibberish(local)).toBe(false))

  const mashes = ['xkqwzrtp', 'kdjfhgtu', 'a8f3k29d1x', '5f2a9c0e1b7d', 'qwerty.lol', 'asdfgh', 'zxcvbnm22', 'bcdfghjk.mn', 'jqxvzk.wp']
  it.each(mashes)('reads %s as gibberish', (local) => expect(isGibberish(local)).toBe(true))

  it('tells bulk shapes and plus addressing', () => {
    expect(readLocalPart('user84721', 'gmail.com')).toEqual({ gibberish: false, bulkShape: true, plusAddressing: false })
    expect(readLocalPart('temp-2024', 'x.io').bulkShape).toBe(true)
    expect(readLocalPart('j.o.h.n.doe', 'gmail.com').bulkShape).toBe(true)
    expect(readLocalPart('j.o.h.n.doe', 'northwind.com').bulkShape).toBe(false)
    expect(readLocalPart('userexperience', 'x.io').bulkShape).toBe(false)
    expect(readLocalPart('anna+shop', 'gmail.com')).toEqual({ gibberish: false, bulkShape: false, plusAddressing: true })
    expect(readLocalPart('+shop', 'gmail.com').plusAddressing).toBe(false)
  })

  it('finds the registrable domain for RDAP', () => {
    expect(registrableDomain('mail.northwind.com')).toBe('northwind.com')
    expect(registrableDomain('shop.co.uk')).toBe('shop.co.uk')
    expect(registrableDomain('mx.shop.com.au')).toBe('shop.com.au')
    expect(registrableDomain('a.b.example.de')).toBe('example.de')
  })
})

describe('RDAP domain age', () => {
  let rdap: FakeServer
  beforeAll(async () => {
    rdap = await startFakeRdap({ 'young-shop.io': registeredDaysAgo(3), 'old-firm.com': '2001-03-14T00:00:00Z', 'slow-registry.net': 'slow', 'no-events.org': 'no-date' })
  })
  afterAll(() => rdap.close())
  const lookupWith = (rdapUrl: string, timeoutMs = 2000) => createRdapLookup({ rdapUrl, timeoutMs, cacheTtlSeconds: 3600, unknownTtlSeconds: 60, cache: createTtlCache<DomainAge>(createStorage(), 'rdap') })

  it('reads the registration date of the registrable domain, and asks once per domain', async () => {
    const rdapLookup = lookupWith(rdap.url)
    const answers = await Promise.all([rdapLookup.lookup('young-shop.io'), rdapLookup.lookup('mail.young-shop.io'), rdapLookup.lookup('young-shop.io')])
    expect(new Set(answers.map((a) => a.registeredAt)).size).toBe(1)
    expect(Date.now() - Date.parse(answers[0]!.registeredAt!)).toBeLessThan(4 * 86_400_000)
    expect(await rdapLookup.lookup('old-firm.com')).toEqual({ registeredAt: '2001-03-14T00:00:00.000Z' })
    expect(rdap.requests.filter((r) => r.path === '/domain/young-shop.io')).toHaveLength(1)
    expect(rdap.requests[0]!.headers.accept).toContain('application/rdap+json')
    await rdapLookup.lookup('young-shop.io')
    expect(rdap.requests.filter((r) => r.path === '/domain/young-shop.io')).toHaveLength(1)
    expect(await rdapLookup.peek('old-firm.com')).toEqual({ registeredAt: '2001-03-14T00:00:00.000Z' })
    expect(await rdapLookup.peek('never-asked.com')).toBeUndefined()
  })

  it('answers unknown, never throws, for a 404, no registration event, a timeout or no server at all', async () => {
    const rdapLookup = lookupWith(rdap.url, 300)
    expect(await rdapLookup.lookup('unknown-to-registry.com')).toEqual({ registeredAt: null })
    expect(await rdapLookup.lookup('no-events.org')).toEqual({ registeredAt: null })
    const started = Date.now()
    expect(await rdapLookup.lookup('slow-registry.net')).toEqual({ registeredAt: null })
    expect(Date.now() - started).toBeLessThan(1500)
    const port = await closedPort()
    expect(await lookupWith(`http://127.0.0.1:${port}`).lookup('old-firm.com')).toEqual({ registeredAt: null })
  })
})

describe('MX lookup', () => {
  let dns: FakeDns
  beforeAll(async () => {
    dns = await startFakeDns({ 'gmail.com': { A: ['142.250.0.1'] }, 'northwind.com': { A: ['198.51.100.1'] }, 'v6-only.net': { AAAA: ['2001:db8::1'] }, 'parked.com': { CNAME: 'nowhere.invalid' }, 'flaky.com': { rcode: 'SERVFAIL' } })
  })
  afterAll(() => dns.close())
  const mxWith = (servers: string[], canaryDomain = 'gmail.com', timeoutMs = 2000) => createMxLookup({ dnsServers: servers, timeoutMs, cacheTtlSeconds: 3600, unknownTtlSeconds: 60, canaryDomain, cache: createTtlCache<MailServer>(createStorage(), 'mx') })

  it('tells an implicit MX (an address), a domain without mail, and a server failure', async () => {
    const mx = mxWith([dns.server])
    expect(await mx.lookup('northwind.com')).toBe('implicit')
    expect(await mx.lookup('v6-only.net')).toBe('implicit')
    expect(await mx.lookup('does-not-exist.com')).toBe('none')
    expect(await mx.lookup('parked.com')).toBe('none')
    expect(await mx.lookup('flaky.com')).toBe('unknown')
    expect(dns.queries.some((q) => q.name === 'northwind.com' && q.type === '15')).toBe(true)
    const asked = dns.queries.length
    expect(await mx.lookup('northwind.com')).toBe('implicit')
    expect(dns.queries.length).toBe(asked)
    mx.close()
  })

  it('answers unknown, not "no mail", when the resolver denies even the canary domain', async () => {
    const mx = mxWith([dns.server], 'canary-not-in-table.com')
    expect(await mx.lookup('does-not-exist.org')).toBe('unknown')
    mx.close()
  })

  it('answers unknown within the timeout when the DNS server never answers', async () => {
    const silent = await startSilentDns()
    const mx = mxWith([silent.server], 'gmail.com', 300)
    const started = Date.now()
    expect(await mx.lookup('northwind.com')).toBe('unknown')
    expect(Date.now() - started).toBeLessThan(1500)
    mx.close()
    await silent.close()
  })
})

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDnsResolver, verifyFirstPartyHost } from '../../plugins/capture/first-party/verify.ts'
import { startFakeDns, type FakeDns } from '../fakes/dns.ts'

const SCRIPT_HOST = 'scripts.dcgate.test'

let dns: FakeDns
const verify = (host: string, expected = SCRIPT_HOST) => verifyFirstPartyHost(host, expected, createDnsResolver([dns.server], { timeoutMs: 500, tries: 1 }))

beforeAll(async () => {
  dns = await startFakeDns({
    'scripts.dcgate.test': { A: ['203.0.113.10', '203.0.113.11'], AAAA: ['2001:db8::10'] },
    't.shop.test': { CNAME: 'scripts.dcgate.test' },
    'wrong.shop.test': { CNAME: 'elsewhere.example.test' },
    'elsewhere.example.test': { A: ['198.51.100.7'] },
    'empty.shop.test': { A: [] },
    'chain.shop.test': { CNAME: 'alias.shop.test' },
    'alias.shop.test': { CNAME: 'scripts.dcgate.test' },
    'upper.shop.test': { CNAME: 'Scripts.DCGate.Test' },
    'flat.shop.test': { A: ['203.0.113.11'], AAAA: ['2001:db8::10'] },
    'proxied.shop.test': { A: ['104.16.0.1'] },
    'broken.shop.test': { rcode: 'SERVFAIL' },
    'loop-a.shop.test': { CNAME: 'loop-b.shop.test' },
    'loop-b.shop.test': { CNAME: 'loop-a.shop.test' },
    'long.shop.test': { CNAME: 'h1.shop.test' },
    'h1.shop.test': { CNAME: 'h2.shop.test' },
    'h2.shop.test': { CNAME: 'h3.shop.test' },
    'h3.shop.test': { CNAME: 'h4.shop.test' },
    'h4.shop.test': { CNAME: 'h5.shop.test' },
    'h5.shop.test': { CNAME: 'scripts.dcgate.test' },
  })
})
afterAll(() => dns?.close())

describe('the fake DNS server answers like an authoritative one', () => {
  it('answers CNAME, A (following the CNAME), AAAA, NODATA and NXDOMAIN', async () => {
    const resolver = createDnsResolver([dns.server], { timeoutMs: 500, tries: 1 })
    expect(await resolver.resolveCname('t.shop.test')).toEqual(['scripts.dcgate.test'])
    expect((await resolver.resolve4('t.shop.test')).sort()).toEqual(['203.0.113.10', '203.0.113.11'])
    expect(await resolver.resolve6('scripts.dcgate.test')).toEqual(['2001:db8::10'])
    await expect(resolver.resolveCname('scripts.dcgate.test')).rejects.toMatchObject({ code: 'ENODATA' })
    await expect(resolver.resolve4('nope.shop.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
    await expect(resolver.resolve4('broken.shop.test')).rejects.toMatchObject({ code: 'ESERVFAIL' })
    expect(dns.queries).toContainEqual({ name: 't.shop.test', type: 'CNAME' })
  })
})

describe('verifyFirstPartyHost', () => {
  it('verifies a CNAME to the script host', async () => {
    expect(await verify('t.shop.test')).toEqual({ verified: true, target: SCRIPT_HOST })
  })

  it('names the wrong target and the expected one', async () => {
    expect(await verify('wrong.shop.test')).toEqual({
      verified: false, target: 'elsewhere.example.test',
      reason: 'CNAME points to elsewhere.example.test, expected scripts.dcgate.test',
    })
  })

  it('says there is no CNAME record, whether the name exists or not', async () => {
    expect(await verify('empty.shop.test')).toEqual({ verified: false, reason: 'no CNAME record for empty.shop.test' })
    expect(await verify('missing.shop.test')).toEqual({ verified: false, reason: 'no CNAME record for missing.shop.test (the name does not exist in DNS)' })
  })

  it('follows a chain of two CNAMEs to the script host', async () => {
    expect(await verify('chain.shop.test')).toEqual({ verified: true, target: 'alias.shop.test' })
  })

  it('compares case-insensitively and ignores a trailing dot on either side', async () => {
    expect(await verify('upper.shop.test')).toEqual({ verified: true, target: SCRIPT_HOST })
    expect(await verify('T.Shop.Test.', 'SCRIPTS.dcgate.test.')).toEqual({ verified: true, target: SCRIPT_HOST })
  })

  it('accepts a flattened record whose addresses are all the script host\'s', async () => {
    expect(await verify('flat.shop.test')).toEqual({ verified: true, target: '2001:db8::10, 203.0.113.11' })
  })

  it('refuses addresses that are not the script host\'s, hinting at a CDN proxy', async () => {
    const result = await verify('proxied.shop.test')
    expect(result).toMatchObject({ verified: false, target: '104.16.0.1' })
    expect(result.reason).toBe('no CNAME record for proxied.shop.test, and its addresses (104.16.0.1) are not those of scripts.dcgate.test (2001:db8::10, 203.0.113.10, 203.0.113.11); if a CDN proxies it, set the record to DNS only')
  })

  it('stops at a loop and after five hops', async () => {
    expect(await verify('loop-a.shop.test')).toMatchObject({ verified: false, reason: 'CNAME chain of loop-a.shop.test loops at loop-a.shop.test' })
    expect(await verify('long.shop.test')).toMatchObject({ verified: false, reason: expect.stringMatching(/^CNAME chain of long\.shop\.test is longer than 5 hops/) })
  })

  it('marks a DNS failure as temporary', async () => {
    expect(await verify('broken.shop.test')).toEqual({ verified: false, temporary: true, reason: 'DNS lookup of broken.shop.test failed (ESERVFAIL); try again later' })
  })

  it('marks an unreachable DNS server as temporary', async () => {
    const closed = await startFakeDns()
    await closed.close()
    const result = await verifyFirstPartyHost('t.shop.test', SCRIPT_HOST, createDnsResolver([closed.server], { timeoutMs: 200, tries: 1 }))
    expect(result).toMatchObject({ verified: false, temporary: true, reason: expect.stringMatching(/^DNS lookup of t\.shop\.test failed \(E[A-Z]+\)/) })
  })
})

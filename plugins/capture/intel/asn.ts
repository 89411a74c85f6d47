/**
 * IP → autonomous system (number and organisation) from the @ip-location-db/asn CSV files (RouteViews, the five
 * RIRs via NRO and DB-IP, CC-BY-4.0). There is no maintained .mmdb of this dataset on npm, so the numeric CSVs are
 * parsed byte by byte at boot (about 400k IPv4 + 100k IPv6 rows) into the typed arrays of a RangeTable. With a data
 * dir, the built table is saved there and later starts read it back (asn-cache.ts).
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { IpKey } from './ip.ts'
import { asnCacheFile, readSavedAsn, saveAsn } from './asn-cache.ts'
import { createTable, RangeBuilder, type RangeTable } from './ranges.ts'
import type { DataSourceInfo } from './types.ts'

export interface AsnLookup {
  lookup(key: IpKey): { asn: number, organization?: string } | undefined
  readonly info: DataSourceInfo
}

const PACKAGE = '@ip-location-db/asn'

/**
 * One CSV row: start, end, ASN, organisation (maybe quoted, "" escapes a quote). IPv4 bounds are read as numbers
 * (`startN`, `endN`; the strings stay empty); IPv6 bounds exceed a double, so they stay decimal strings for BigInt.
 */
interface Row { start: string, end: string, startN: number, endN: number, asn: number, org: string | undefined }

/**
 * Walk the rows of a numeric ip-location-db CSV. The organisation text is decoded only when `wantOrg(asn)` says so,
 * which is once per ASN: decoding 500k strings would cost more than everything else together. For the same reason
 * IPv4 bounds are summed digit by digit, not decoded (a tenth of the CPU time of a start).
 */
function forEachRow(buffer: Buffer, ipv4: boolean, wantOrg: (asn: number) => boolean, onRow: (row: Row) => void): void {
  let i = 0
  const length = buffer.length
  while (i < length) {
    const startBegin = i
    let startN = 0
    while (i < length && buffer[i] !== 44) startN = startN * 10 + buffer[i++]! - 48
    const start = ipv4 ? '' : buffer.toString('latin1', startBegin, i)
    const startEmpty = i++ === startBegin
    const endBegin = i
    let endN = 0
    while (i < length && buffer[i] !== 44) endN = endN * 10 + buffer[i++]! - 48
    const end = ipv4 ? '' : buffer.toString('latin1', endBegin, i)
    const endEmpty = i++ === endBegin
    let asn = 0
    while (i < length && buffer[i] !== 44) asn = asn * 10 + buffer[i++]! - 48
    i++
    const orgBegin = i
    let quoted = false
    while (i < length && (buffer[i] !== 10 || quoted)) {
      if (buffer[i] === 34) quoted = !quoted
      i++
    }
    let orgEnd = i
    if (orgEnd > orgBegin && buffer[orgEnd - 1] === 13) orgEnd--
    i++ // newline
    if (startEmpty || endEmpty) continue
    let org: string | undefined
    if (wantOrg(asn) && orgEnd > orgBegin) {
      org = buffer.toString('utf8', orgBegin, orgEnd)
      if (org.startsWith('"') && org.endsWith('"')) org = org.slice(1, -1).replaceAll('""', '"')
    }
    onRow({ start, end, startN, endN, asn, org })
  }
}

/**
 * The organisation of each ASN (about 91k) as one string with the sorted ASNs and where each name starts: 3 MB,
 * where a Map of 91k strings kept 8 MB of heap for the life of the process.
 */
function toNameTable(names: ReadonlyMap<number, string>): { get: (asn: number) => string | undefined } {
  const asns = Uint32Array.from(names.keys()).sort()
  const starts = new Uint32Array(asns.length + 1)
  const parts: string[] = []
  // A loop, not a callback: a closure here would share this scope with get() and keep `names` alive.
  for (let i = 0, at = 0; i < asns.length; i++) {
    const name = names.get(asns[i]!)!
    starts[i] = at
    parts.push(name)
    at += name.length
    starts[i + 1] = at
  }
  const text = parts.join('')
  return {
    get(asn) {
      let low = 0
      let high = asns.length - 1
      while (low <= high) {
        const middle = (low + high) >>> 1
        if (asns[middle] === asn) return text.slice(starts[middle], starts[middle + 1])
        if (asns[middle]! < asn) low = middle + 1
        else high = middle - 1
      }
      return undefined
    },
  }
}

function packageDir(): string {
  return dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`))
}

/** "2.3.2026061719" → "2026-06-17": the package version carries the build date of the data (YYYYMMDDHH). */
export function dateFromVersion(version: string): string | undefined {
  const match = /\.(\d{4})(\d{2})(\d{2})\d{2}$/.exec(version)
  return match ? `${match[1]}-${match[2]}-${match[3]}` : undefined
}

/** The table from `dataDir`'s saved copy when there is one for this data version; else parsed (and saved). */
export async function loadAsn(dataDir?: string): Promise<AsnLookup> {
  const dir = packageDir()
  const version = (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version
  const file = dataDir === undefined ? undefined : asnCacheFile(dataDir, version)
  const saved = file === undefined ? undefined : readSavedAsn(file)
  const { table, names } = saved ? { table: createTable(saved.four, saved.six), names: saved.names } : await parseAsn(dir)
  if (file !== undefined && !saved) saveAsn(file, table, names)
  const organizations = toNameTable(names)

  return {
    info: {
      source: `${PACKAGE} ${version} (RouteViews + NRO + DB-IP, CC-BY-4.0)`,
      date: dateFromVersion(version),
      entries: table.size,
      origin: 'bundled',
    },
    lookup(key) {
      const asn = table.lookup(key)
      if (asn === undefined || asn === 0) return undefined
      return { asn, organization: organizations.get(asn) }
    },
  }
}

async function parseAsn(dir: string): Promise<{ table: RangeTable, names: Map<number, string> }> {
  const [v4, v6] = await Promise.all([readFile(join(dir, 'asn-ipv4-num.csv')), readFile(join(dir, 'asn-ipv6-num.csv'))])
  const names = new Map<number, string>()
  const wantOrg = (asn: number) => !names.has(asn)
  const remember = (asn: number, org: string | undefined) => {
    if (org !== undefined) names.set(asn, org)
  }
  const builder = new RangeBuilder()

  forEachRow(v4, true, wantOrg, (row) => {
    builder.add4(row.startN, row.endN, row.asn)
    remember(row.asn, row.org)
  })
  const low64 = 0xffffffffn
  forEachRow(v6, false, wantOrg, (row) => {
    const start = BigInt(row.start)
    const end = BigInt(row.end)
    builder.add6(Number(start >> 96n), Number((start >> 64n) & low64), Number(end >> 96n), Number((end >> 64n) & low64), row.asn)
    remember(row.asn, row.org)
  })
  return { table: builder.build(), names }
}

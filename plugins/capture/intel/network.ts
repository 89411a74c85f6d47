/**
 * Tor / hosting / VPN / proxy from the lists (./lists.ts) plus the ASN heuristic: a curated list of hosting ASNs
 * (hosting-asns.txt) and VPN-operator ASNs (vpn-asns.txt) applied to the ASN of the address.
 */
import type { IpKey } from './ip.ts'
import type { ListFile, ListKind } from './lists.ts'
import { RangeBuilder, type RangeTable } from './ranges.ts'
import type { DataSourceInfo, ListInfo, VisitDataInfo } from './types.ts'

export interface NetworkFacts {
  isTor: boolean
  isHosting: boolean
  isVpn: boolean
  isProxy: boolean
  /** The lists and heuristics that matched: 'tor-exits', 'cloud-aws', 'asn:24940'... */
  sources: string[]
}

export interface NetworkLookup {
  lookup(key: IpKey | undefined, asn: number | undefined): NetworkFacts
  readonly info: Pick<VisitDataInfo, 'tor' | 'hosting' | 'vpn' | 'proxy'>
}

interface Category {
  table: RangeTable
  /** list names, indexed by the table's values */
  names: string[]
  lists: ListInfo[]
}

function toListInfo(list: ListFile, entries: number): ListInfo {
  const info: ListInfo = { name: list.name, source: list.header.source ?? list.path, entries, origin: list.origin }
  if (list.header.date) info.date = list.header.date
  if (list.header.source?.startsWith('http')) info.url = list.header.source
  return info
}

function buildCategory(lists: ListFile[], kind: ListKind): Category {
  const builder = new RangeBuilder()
  const names: string[] = []
  const infos: ListInfo[] = []
  for (const list of lists.filter((l) => l.kind === kind)) {
    const index = names.push(list.name) - 1
    let added = 0
    for (const entry of list.entries) if (builder.addCidr(entry, index)) added++
    infos.push(toListInfo(list, added))
  }
  return { table: builder.build(), names, lists: infos }
}

function buildAsnSet(lists: ListFile[], kind: ListKind): { asns: Set<number>, lists: ListInfo[] } {
  const asns = new Set<number>()
  const infos: ListInfo[] = []
  for (const list of lists.filter((l) => l.kind === kind)) {
    const before = asns.size
    for (const entry of list.entries) {
      const asn = Number(entry.replace(/^AS/i, ''))
      if (Number.isInteger(asn) && asn > 0) asns.add(asn)
    }
    infos.push(toListInfo(list, asns.size - before))
  }
  return { asns, lists: infos }
}

/** One summary per kind: the list names, the oldest date, the total, and where they came from. */
function summarise(lists: ListInfo[], extra = ''): DataSourceInfo {
  const dates = lists.map((l) => l.date).filter((d): d is string => !!d).sort()
  const origins = new Set(lists.map((l) => l.origin))
  const names = lists.map((l) => `${l.name}${l.origin === 'updated' ? ' (updated)' : ''}`)
  const info: DataSourceInfo = {
    source: [names.join(', ') || 'no list', extra].filter(Boolean).join('; '),
    entries: lists.reduce((sum, l) => sum + (l.entries ?? 0), 0),
    origin: origins.size > 1 ? 'mixed' : [...origins][0] ?? 'vendored',
  }
  if (dates[0]) info.date = dates[0]
  return info
}

export function createNetworkLookup(lists: ListFile[]): NetworkLookup {
  const tor = buildCategory(lists, 'tor')
  const hosting = buildCategory(lists, 'hosting')
  const vpn = buildCategory(lists, 'vpn')
  const proxy = buildCategory(lists, 'proxy')
  const hostingAsns = buildAsnSet(lists, 'hosting-asns')
  const vpnAsns = buildAsnSet(lists, 'vpn-asns')

  function match(category: Category, key: IpKey, sources: string[]): boolean {
    const index = category.table.lookup(key)
    if (index === undefined) return false
    sources.push(category.names[index]!)
    return true
  }

  return {
    info: {
      tor: { ...summarise(tor.lists), lists: tor.lists },
      hosting: { ...summarise([...hosting.lists, ...hostingAsns.lists], `ASN heuristic: ${hostingAsns.asns.size} ASNs`), lists: [...hosting.lists, ...hostingAsns.lists], asns: hostingAsns.asns.size },
      vpn: { ...summarise([...vpn.lists, ...vpnAsns.lists], `ASN heuristic: ${vpnAsns.asns.size} ASNs`), lists: [...vpn.lists, ...vpnAsns.lists], asns: vpnAsns.asns.size },
      proxy: { ...summarise(proxy.lists), lists: proxy.lists },
    },
    lookup(key, asn) {
      const sources: string[] = []
      const facts: NetworkFacts = { isTor: false, isHosting: false, isVpn: false, isProxy: false, sources }
      if (key) {
        facts.isTor = match(tor, key, sources)
        facts.isHosting = match(hosting, key, sources)
        facts.isVpn = match(vpn, key, sources)
        facts.isProxy = match(proxy, key, sources)
      }
      if (asn !== undefined) {
        if (hostingAsns.asns.has(asn)) {
          facts.isHosting = true
          sources.push(`asn:${asn}`)
        }
        if (vpnAsns.asns.has(asn)) {
          facts.isVpn = true
          if (!sources.includes(`asn:${asn}`)) sources.push(`asn:${asn}`)
        }
      }
      return facts
    },
  }
}

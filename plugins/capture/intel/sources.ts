/**
 * The official feeds `dcgate data update` downloads, and how to read each one. A feed gives a list of addresses
 * or CIDR blocks and, when it says, the day it was published. Adding a provider = adding an entry here; the file
 * name prefix (tor-, cloud-, vpn-, proxy-) decides what a match means (lists.ts).
 */
export type Fetch = typeof globalThis.fetch

export interface Feed {
  entries: string[]
  /** YYYY-MM-DD when the feed says when it was made. */
  date?: string
  /** The URLs actually read (Azure's file name changes every week). */
  urls: string[]
}

export interface IntelSource {
  name: string
  label: string
  /** Where the data comes from, written into the list's header. */
  source: string
  read(get: (url: string) => Promise<string>): Promise<Feed>
}

/** First column of a CSV or a plain list, skipping comments and blank lines. */
export function firstColumn(text: string): string[] {
  const out: string[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line || line.startsWith('#')) continue
    const cell = line.split(',')[0]!.trim()
    if (cell) out.push(cell)
  }
  return out
}

function isoDay(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const match = /^(\d{4})-?(\d{2})-?(\d{2})/.exec(value)
  return match ? `${match[1]}-${match[2]}-${match[3]}` : undefined
}

const TOR = 'https://check.torproject.org/torbulkexitlist'
const AWS = 'https://ip-ranges.amazonaws.com/ip-ranges.json'
const GOOG = 'https://www.gstatic.com/ipranges/goog.json'
const GCP = 'https://www.gstatic.com/ipranges/cloud.json'
const AZURE_PAGE = 'https://www.microsoft.com/en-us/download/details.aspx?id=56519'
const ORACLE = 'https://docs.oracle.com/en-us/iaas/tools/public_ip_ranges.json'
const DIGITALOCEAN = 'https://www.digitalocean.com/geo/google.csv'
const LINODE = 'https://geoip.linode.com/'
const ICLOUD_RELAY = 'https://mask-api.icloud.com/egress-ip-ranges.csv'

interface GoogleRanges { creationTime?: string, prefixes?: { ipv4Prefix?: string, ipv6Prefix?: string }[] }

export const SOURCES: readonly IntelSource[] = [
  {
    name: 'tor-exits', label: 'Tor exit relays', source: TOR,
    read: async (get) => ({ entries: firstColumn(await get(TOR)), urls: [TOR] }),
  },
  {
    name: 'cloud-aws', label: 'Amazon Web Services', source: AWS,
    async read(get) {
      const json = JSON.parse(await get(AWS)) as { createDate?: string, prefixes?: { ip_prefix?: string }[], ipv6_prefixes?: { ipv6_prefix?: string }[] }
      const entries = [...(json.prefixes ?? []).map((p) => p.ip_prefix), ...(json.ipv6_prefixes ?? []).map((p) => p.ipv6_prefix)]
      return { entries: entries.filter((e): e is string => !!e), date: isoDay(json.createDate), urls: [AWS] }
    },
  },
  {
    name: 'cloud-google', label: 'Google (services, Google Cloud, Googlebot)', source: `${GOOG} + ${GCP}`,
    async read(get) {
      const [goog, cloud] = [JSON.parse(await get(GOOG)) as GoogleRanges, JSON.parse(await get(GCP)) as GoogleRanges]
      const entries = [...(goog.prefixes ?? []), ...(cloud.prefixes ?? [])].map((p) => p.ipv4Prefix ?? p.ipv6Prefix)
      const dates = [isoDay(goog.creationTime), isoDay(cloud.creationTime)].filter((d): d is string => !!d).sort()
      return { entries: entries.filter((e): e is string => !!e), date: dates[0], urls: [GOOG, GCP] }
    },
  },
  {
    name: 'cloud-azure', label: 'Microsoft Azure (public cloud Service Tags)', source: AZURE_PAGE,
    async read(get) {
      // The download page links this week's file, e.g. ServiceTags_Public_20261116.json.
      const page = await get(AZURE_PAGE)
      const url = /https:\/\/download\.microsoft\.com\/[^"'\s<>]*ServiceTags_Public_\d+\.json/.exec(page)?.[0]
      if (!url) throw new Error('no ServiceTags_Public_*.json link on the download page')
      const json = JSON.parse(await get(url)) as { values?: { properties?: { addressPrefixes?: string[] } }[] }
      const entries = (json.values ?? []).flatMap((v) => v.properties?.addressPrefixes ?? [])
      return { entries, date: isoDay(/ServiceTags_Public_(\d{8})/.exec(url)?.[1]), urls: [AZURE_PAGE, url] }
    },
  },
  {
    name: 'cloud-oracle', label: 'Oracle Cloud Infrastructure', source: ORACLE,
    async read(get) {
      const json = JSON.parse(await get(ORACLE)) as { last_updated_timestamp?: string, regions?: { cidrs?: { cidr?: string }[] }[] }
      const entries = (json.regions ?? []).flatMap((r) => (r.cidrs ?? []).map((c) => c.cidr))
      return { entries: entries.filter((e): e is string => !!e), date: isoDay(json.last_updated_timestamp), urls: [ORACLE] }
    },
  },
  {
    name: 'cloud-digitalocean', label: 'DigitalOcean', source: DIGITALOCEAN,
    read: async (get) => ({ entries: firstColumn(await get(DIGITALOCEAN)), urls: [DIGITALOCEAN] }),
  },
  {
    name: 'cloud-linode', label: 'Linode (Akamai Connected Cloud)', source: LINODE,
    read: async (get) => ({ entries: firstColumn(await get(LINODE)), urls: [LINODE] }),
  },
  {
    name: 'proxy-icloud-relay', label: 'iCloud Private Relay egress', source: ICLOUD_RELAY,
    read: async (get) => ({ entries: firstColumn(await get(ICLOUD_RELAY)), urls: [ICLOUD_RELAY] }),
  },
]

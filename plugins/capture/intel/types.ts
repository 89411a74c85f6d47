import type { BotSignals } from '../protocol.ts'

/** What the factory and the updater log through; the app's consola instance fits. */
export interface IntelLogger {
  info(message: string): void
  warn(message: string): void
}

export type Platform = 'desktop' | 'mobile' | 'tablet' | 'tv' | 'bot'

/** What the browser reported about itself (protocol.ts, `signals` of /collect). */
export type ClientSignals = BotSignals

/** What the server knows about the hit beyond the browser's own signals. */
export interface HitTiming {
  /**
   * 'form': the visitor submitted something (a form, an identify from a form), which cannot happen without input.
   * 'pageview' and 'event' may fire at load with no interaction at all (page views, programmatic ViewContent).
   */
  kind?: 'pageview' | 'event' | 'form'
}

export interface ClassifyInput {
  /** The client address as the route resolved it (X-Forwarded-For only with server.trustProxy). */
  ip?: string
  userAgent?: string
  signals?: ClientSignals
  timing?: HitTiming
}

export interface VisitInfo {
  /** ISO 3166-1 alpha-2, upper case. */
  country?: string
  /** Only with a city-level database configured as capture.geoDatabase; the bundled data is country level. */
  city?: string
  /** The user-supplied database's ISP field when it has one, else the ASN's organisation. */
  isp?: string
  /** The user-supplied database's organisation field when it has one, else the ASN's organisation. */
  organization?: string
  asn?: number
  isVpn: boolean
  isProxy: boolean
  isTor: boolean
  isHosting: boolean
  /** Which list or heuristic said hosting/VPN/proxy/Tor: e.g. 'cloud-aws', 'asn:24940', 'tor-exits'. */
  networkSources: string[]
  platform?: Platform
  browser?: string
  browserVersion?: string
  os?: string
  osVersion?: string
  isBot: boolean
  /** Stable short codes, listed in README.md; empty when isBot is false. */
  botReasons: string[]
}

/** Where one kind of data came from and how old it is, for the startup log. */
export interface DataSourceInfo {
  /** Human-readable: the package and version, the file path, or the list names. */
  source: string
  /** YYYY-MM-DD: when the data was published or retrieved; for several lists, the oldest. */
  date?: string
  /** Ranges, addresses or ASNs loaded. */
  entries?: number
  /** bundled: an npm data package; vendored: plugins/capture/intel/data; updated: <dataDir>/intel; configured: capture.geoDatabase. */
  origin?: 'bundled' | 'vendored' | 'updated' | 'configured' | 'mixed'
}

export interface ListInfo extends DataSourceInfo {
  name: string
  /** The official feed the list comes from. */
  url?: string
}

export interface VisitDataInfo {
  geo: DataSourceInfo
  asn: DataSourceInfo
  tor: DataSourceInfo & { lists: ListInfo[] }
  hosting: DataSourceInfo & { lists: ListInfo[], asns: number }
  vpn: DataSourceInfo & { lists: ListInfo[], asns: number }
  proxy: DataSourceInfo & { lists: ListInfo[] }
}

export interface VisitIntel {
  /** Synchronous and allocation-light: it runs on every hit. */
  classify(input: ClassifyInput): VisitInfo
  /** Whether a visitor from this country must be asked before tracking; unknown country → true. */
  requiresConsent(country?: string): boolean
  readonly dataInfo: VisitDataInfo
}

export interface VisitIntelOptions {
  /** capture.geoDatabase: a GeoLite2 / GeoIP2 / DB-IP .mmdb used instead of the bundled country data. */
  geoDatabase?: string
  /** The server's data dir; `dcgate data update` writes fresher lists to <dataDir>/intel/. */
  dataDir: string
  logger: IntelLogger
}

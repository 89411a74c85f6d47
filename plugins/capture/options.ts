import * as v from 'valibot'
import { NonEmpty, RetentionDays, strict } from '../../core/config/schema.ts'

/** `capture` in the config: how hits are batched, where visit data comes from, and how long it is kept. */
export const CaptureOptions = strict({
  /** Hits are written in batches: when this many are waiting, or this long after the first one. */
  flushSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)), 5000),
  flushIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(60_000)), 1000),
  /** Hits waiting for the database may hold this much memory, and their journal this much disk; past it /collect answers 503. */
  maxPendingMb: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65_536)), 256),
  /** A GeoLite2/DB-IP City .mmdb file to use instead of the bundled country/city data (fresher, or licensed). */
  geoDatabase: v.optional(NonEmpty),
  /** DNS servers for first-party host checks (ip or ip:port); the system resolver when empty. */
  dnsServers: v.optional(v.array(NonEmpty), []),
  /** The shared script host a site's firstPartyHost must CNAME to; defaults to the host of server.cdnUrl or baseUrl. */
  scriptHost: v.optional(NonEmpty),
  /**
   * Conversions one /collect request may make, and one visit (the script's `sid`) in a day: anyone with the cop_key
   * can post 50 Purchase hits at once, and each conversion goes to every platform. Events past a cap are kept as
   * events only (pixel.ts).
   */
  conversionsPerRequest: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(50)), 5),
  conversionsPerVisit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000)), 20),
  /** Page events, visits and identified users older than this many days are deleted (hourly); unset keeps them. */
  retentionDays: v.optional(RetentionDays),
})

export type CaptureOptions = v.InferOutput<typeof CaptureOptions>

declare module '../../core/config/schema.ts' {
  interface PluginSections { capture?: v.InferInput<typeof CaptureOptions> }
  interface ResolvedPluginSections { capture: CaptureOptions }
}

/**
 * Vendor API versions about to stop working. Each adapter's version.ts carries the sunset date its vendor publishes;
 * from SUNSET_WARNING_DAYS before that day (and after it), every version a configured site uses is named at start-up
 * and in /readyz, so an upgrade is not discovered through failed deliveries.
 */
import type { Registry } from './registry.ts'

/** How long before a sunset dcgate starts warning: time for a release with the new version to reach production. */
export const SUNSET_WARNING_DAYS = 60

const DAY_MS = 86_400_000

export interface SunsetWarning {
  /** The adapter's name, as under `sites[].destinations` or `sites[].crm`. */
  adapter: string
  version: string
  /** YYYY-MM-DD, the first day the version may fail. */
  sunset: string
  /** Whole days from now to the sunset; 0 or less once it has passed. */
  daysLeft: number
  source: string
  /** Site ids using it: for the log, not for the public probe. */
  sites: string[]
}

/** The sunsets within `withinDays` of `now` (or past) of the adapters the given sites use, soonest first. */
export function findSunsetWarnings(registry: Registry, siteIds: readonly string[], now: Date, withinDays = SUNSET_WARNING_DAYS): SunsetWarning[] {
  const byAdapter = new Map<string, SunsetWarning>()
  for (const siteId of siteIds) {
    const used = [...registry.forSite(siteId, 'ad-platform'), ...registry.forSite(siteId, 'crm-poller')]
    for (const { definition } of used) {
      const sunset = definition.apiSunset
      if (!sunset) continue
      const daysLeft = daysUntil(sunset.date, now)
      if (daysLeft > withinDays) continue
      const key = `${definition.kind}:${definition.name}`
      const warning = byAdapter.get(key) ?? { adapter: definition.name, version: sunset.version, sunset: sunset.date, daysLeft, source: sunset.source, sites: [] }
      warning.sites.push(siteId)
      byAdapter.set(key, warning)
    }
  }
  return [...byAdapter.values()].sort((a, b) => a.daysLeft - b.daysLeft)
}

/** One line for the log: what stops, when, where it is used, and what to do. */
export function describeSunset(warning: SunsetWarning): string {
  const when = warning.daysLeft > 0 ? `in ${warning.daysLeft} day${warning.daysLeft === 1 ? '' : 's'}, on ${warning.sunset}` : `since ${warning.sunset}`
  return `${warning.adapter} API version ${warning.version} is retired by the vendor ${when} (${warning.source}); `
    + `used by site${warning.sites.length === 1 ? '' : 's'} ${warning.sites.join(', ')}. Upgrade dcgate to a release that speaks a newer version.`
}

/** What /readyz shows anyone who asks: the vendor's version and date, no site ids. */
export function toPublicSunset(warning: SunsetWarning): PublicSunset {
  return { adapter: warning.adapter, api_version: warning.version, sunset: warning.sunset, days_left: warning.daysLeft, source: warning.source }
}

export interface PublicSunset {
  adapter: string
  api_version: string
  sunset: string
  days_left: number
  source: string
}

function daysUntil(date: string, now: Date): number {
  return Math.ceil((Date.parse(`${date}T00:00:00Z`) - now.getTime()) / DAY_MS)
}

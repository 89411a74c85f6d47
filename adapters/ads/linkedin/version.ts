import type { ApiSunset } from '../../../core/registry.ts'

/**
 * The LinkedIn Marketing API version this adapter speaks, sent as the `LinkedIn-Version` header (YYYYMM) on every
 * call; LinkedIn applies no default, and a missing or sunset version is refused (400 VERSION_MISSING, 426
 * NONEXISTENT_VERSION).
 *
 * 202608 (August 2026) is the newest version LinkedIn's own "Recent Marketing API Changes" page lists. It includes
 * externalIds on conversion events (202410+).
 *
 * Sunset (read 2026-11-28): LinkedIn's versioning page says each monthly version is "supported and stable for a
 * minimum of one year before sunset", and its migrations page dates each version's sunset in a table; the rows we
 * could read end at 202603 (2027-03-16), and the deprecation banner dates 202508 at 2026-08-17, so 202608's row is
 * expected mid-August 2027. Until that row is read, LINKEDIN_API_SUNSET holds the earliest day the one-year rule
 * allows, 2027-08-01, so the 60-day warning (core/api-sunsets.ts) cannot come late.
 *
 * Changelog:          https://learn.microsoft.com/en-us/linkedin/marketing/integrations/recent-changes
 * Versions, sunsets:  https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations
 * Versioning policy:  https://learn.microsoft.com/en-us/linkedin/marketing/versioning
 *
 * To upgrade: read the Conversions API entries in the changelog, change this constant and map.ts in place, and
 * accept the snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const LINKEDIN_API_VERSION = '202608'

/** When LinkedIn may retire LINKEDIN_API_VERSION: see above for why this is the earliest day its policy allows. */
export const LINKEDIN_API_SUNSET = {
  version: LINKEDIN_API_VERSION,
  date: '2027-08-01',
  source: 'https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations',
} as const satisfies ApiSunset

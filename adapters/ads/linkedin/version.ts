/**
 * The LinkedIn Marketing API version this adapter speaks, sent as the `LinkedIn-Version` header (YYYYMM) on every
 * call; LinkedIn applies no default, and a missing or sunset version is refused (400 VERSION_MISSING, 426
 * NONEXISTENT_VERSION).
 *
 * 202608 (August 2026) is the newest version LinkedIn's own "Recent Marketing API Changes" page lists. LinkedIn
 * supports each monthly version for at least a year, so it is expected to stay active until about August 2027.
 * It includes externalIds on conversion events (202410+).
 *
 * Changelog:          https://learn.microsoft.com/en-us/linkedin/marketing/integrations/recent-changes
 * Versions, sunsets:  https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations
 * Versioning policy:  https://learn.microsoft.com/en-us/linkedin/marketing/versioning
 *
 * To upgrade: read the Conversions API entries in the changelog, change this constant and map.ts in place, and
 * accept the snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const LINKEDIN_API_VERSION = '202608'

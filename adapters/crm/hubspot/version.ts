import type { ApiSunset } from '../../../core/registry.ts'

/**
 * The HubSpot API this poller speaks: the date-based version 2026-09, `POST /crm/objects/2026-09/contacts/search`.
 *
 * Since March 30, 2026 HubSpot versions its REST APIs by release date (`/<api>/<YYYY-MM>/<resource>`), a new version
 * each March and September, and the numbered paths (v1–v3) become unsupported in September 2027. 2026-09 shipped on
 * September 8, 2026 and is the latest; the search request and answer are the v3 ones on the new path. Sources, read
 * 2026-11-28: README.md ("API version and sunset").
 *
 * Versioning policy: https://developers.hubspot.com/docs/developer-tooling/platform/versioning
 * Migration guide:   https://developers.hubspot.com/docs/api-reference/legacy/migration-guide
 * Changelog:         https://developers.hubspot.com/changelog
 *
 * To upgrade: read the changelog for the new date version, change this constant and the sunset below in place (the
 * fake serves the versions HubSpot serves).
 */
export const HUBSPOT_API_VERSION = '2026-09'

/**
 * A date version is "Unsupported" 18 months after it went GA (HubSpot's versioning policy): 2026-09 went GA on
 * 2026-09-08, so from 2028-03-08.
 */
export const HUBSPOT_API_SUNSET = {
  version: HUBSPOT_API_VERSION,
  date: '2028-03-08',
  source: 'https://developers.hubspot.com/docs/developer-tooling/platform/versioning',
} as const satisfies ApiSunset

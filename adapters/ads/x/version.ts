/**
 * The X Ads API version the X adapter speaks; the version is the first path segment
 * (`https://ads-api.x.com/12/measurement/conversions/{pixel_id}`).
 *
 * 12.0 was introduced on 2022-10-27 and is the newest version; X lists no deprecation or end-of-life date for it.
 * X deprecates a version six months after announcing the next one and serves two versions at once; every answer
 * carries `x-current-api-version`, and a call to a deprecated version also gets an `x-api-warn` header.
 * Versions and their dates: https://docs.x.com/x-ads-api/fundamentals/versioning
 * Announcements: https://devcommunity.x.com/c/ads-api/ (subscribe: https://docs.x.com/x-ads-api/getting-started/subscribe-for-updates)
 *
 * To upgrade: read the version's announcement for measurement/conversions changes, change this constant and the
 * mapping in map.ts in place, and accept the snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const X_ADS_API_VERSION = '12'

/**
 * The Graph API version the Meta adapter speaks (the Conversions API lives on the Graph API).
 *
 * What Meta's version tables say (read 2026-11-28):
 * - Graph API (https://developers.facebook.com/docs/graph-api/changelog/versions/): v26.0 released 2026-07-29,
 *   expiration date "TBD"; v25.0 expires 2028-07-29, v24.0 2028-02-18.
 * - Marketing API (https://developers.facebook.com/documentation/ads-commerce/marketing-api/marketing-api-changelog/versions):
 *   v27.0 released 2026-11-04 and is the newest; v26.0 expiration "TBD"; v25.0 expires 2027-02-23, v24.0 2026-11-10.
 *   The Marketing API keeps a version at least 90 days after its successor ships (its Versioning page), so its dates
 *   come sooner than the Graph API table's.
 * So v26.0 has no published end date yet, and there is no apiSunset below; when Meta dates it, add it.
 *
 * To upgrade: read the changelog entries for the Conversions API (https://developers.facebook.com/docs/graph-api/changelog),
 * change this constant and the mapping in map.ts in place, and accept the snapshot diff in
 * test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const META_API_VERSION = 'v26.0'

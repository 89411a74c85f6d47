/**
 * The Graph API version the Meta adapter speaks (the Conversions API lives on the Graph API).
 *
 * v26.0 was released on 2026-07-29 and is the newest version. Meta supports every Graph API version for at
 * least two years for the Conversions API, even where the Marketing API retires a version sooner.
 * Changelog: https://developers.facebook.com/docs/graph-api/changelog
 * Versions and their end dates: https://developers.facebook.com/docs/graph-api/changelog/versions/
 *
 * To upgrade: read the changelog entries for the Conversions API, change this constant and the mapping in
 * map.ts in place, and accept the snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const META_API_VERSION = 'v26.0'

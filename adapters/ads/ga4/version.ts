/**
 * The Google Analytics 4 Measurement Protocol this adapter speaks: `POST /mp/collect` (and `/debug/mp/collect` to
 * validate), JSON body with `client_id`, `events[]`, `user_data` and `consent`. The protocol carries no version in
 * its URL; Google changes it in place and lists the changes in the Measurement Protocol release notes.
 *
 * Reference:     https://developers.google.com/analytics/devguides/collection/protocol/ga4/reference
 * Release notes: https://developers.google.com/analytics/devguides/collection/protocol/ga4/changelog
 *
 * To upgrade: read the release notes, change the mapping in map.ts in place, bump this constant, and accept the
 * snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const GA4_API_VERSION = 'mp-2026-11'

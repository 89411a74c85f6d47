/**
 * The Reddit Ads API version the Conversions API adapter speaks: v3, `POST /api/v3/pixels/{pixel_id}/conversion_events`.
 *
 * Reddit's migration guide deprecates v2.0 (`/api/v2.0/conversions/events/{id}`) in favour of v3 and asks new
 * integrations to use v3; v3 changed the envelope (`{ data: { events } }`), the units (`event_at` in milliseconds,
 * `value` a double in the currency's base unit), the event names (UPPER_SNAKE_CASE) and test mode (`test_id`).
 *
 * Changelog:       https://ads-api.reddit.com/docs/v3/changelog
 * Migration guide: https://ads-api.reddit.com/docs/v3/capi-migration
 *
 * To upgrade: read the changelog, change this constant and the mapping in map.ts in place, and accept the snapshot
 * diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const REDDIT_API_VERSION = 'v3'

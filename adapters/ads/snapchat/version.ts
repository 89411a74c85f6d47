/**
 * The Snapchat Conversions API version this adapter speaks: v3, `POST https://tr.snapchat.com/v3/{pixelId}/events`
 * with `{ data: [...] }` (and `/v3/{pixelId}/events/validate` in test mode). v2 (`/v2/conversion`) is the previous
 * version; Snap's migration guide moves integrations to v3.
 *
 * Reference:       https://developers.snap.com/api/marketing-api/Conversions-API/UsingTheAPI
 * Migration guide: https://developers.snap.com/api/marketing-api/Conversions-API/MigrationGuide
 *
 * To upgrade: read the migration guide, change this constant and the mapping in map.ts in place, and accept the
 * snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const SNAPCHAT_API_VERSION = 'v3'

/**
 * The Pinterest REST API version the Pinterest adapter speaks. The Conversions API is the v5 operation
 * `events/create` (POST /v5/ad_accounts/{ad_account_id}/events); v5 is Pinterest's only live major version
 * (v3 was retired on 2023-06-30). Minor releases (5.x) change the OpenAPI description without a new path.
 *
 * Changelog (one release per 5.x, with the operations that changed): https://github.com/pinterest/api-description/releases
 * Reference: https://developers.pinterest.com/docs/api/v5/#operation/events/create
 *
 * To upgrade: read the release notes for `events/create` and its ConversionEvents schemas, change this constant and
 * the mapping in map.ts in place, and accept the snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const PINTEREST_API_VERSION = 'v5'

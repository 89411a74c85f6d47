/**
 * The Pipedrive API this poller speaks: API v2 (`/api/v2/deals`, `/api/v2/persons`), with the token in the
 * `x-api-token` header. v2 is Pipedrive's recommended path for deals and persons: cursor pagination (`cursor`,
 * `additional_data.next_cursor`, up to 500 a page), `updated_since` filters in RFC 3339, RFC 3339 timestamps in
 * answers, and lower token costs than v1 under the token-based rate limits. v1 list endpoints page by offset
 * (`start`, `more_items_in_collection`) and its cursor `/collection` endpoints need global admin rights.
 *
 * Changelog:  https://developers.pipedrive.com/changelog
 * v2 guide:   https://pipedrive.readme.io/docs/pipedrive-api-v2
 *
 * To upgrade: read the changelog, change this constant and the paths in map.ts in place.
 */
export const PIPEDRIVE_API_VERSION = 'v2'

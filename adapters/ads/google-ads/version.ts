/**
 * The API versions this adapter speaks.
 *
 * Default path, the Data Manager API: `v1` (`POST /v1/events:ingest`). Google adds fields to v1 in place and lists
 * them in the release notes; a v2 would change this constant and the URL in map.ts.
 *   Release notes: https://developers.google.com/data-manager/api/reference (the "Release notes" page)
 *
 * Legacy path (`api: 'upload-clicks'`), the Google Ads API: v26 is the latest major version (released 2026-10-14;
 * v26.1 is a minor release on the same /v26 endpoint). Majors live about a year: change the constant, check the
 * mapping against the proto diff, and run the tests.
 *   Release notes: https://developers.google.com/google-ads/api/docs/release-notes
 *   Sunset dates:  https://developers.google.com/google-ads/api/docs/sunset-dates
 */
export const GOOGLE_ADS_API_VERSION = 'datamanager/v1'

/** The Google Ads API version of the legacy ConversionUploadService path (`api: 'upload-clicks'`). */
export const UPLOAD_CLICKS_VERSION = 'v26'

/** The path segment of the Data Manager API version: `${baseUrl}/v1/events:ingest`. */
export const DATA_MANAGER_VERSION = 'v1'

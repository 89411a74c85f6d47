/**
 * The Google Ads API version this adapter speaks. v26 is the latest major version (released 2026-10-14; v26.1
 * is a minor release on the same /v26 endpoint). Majors live about a year, so plan one upgrade a year: change this
 * constant, check the mapping against the proto diff, and run the tests.
 *
 * Release notes: https://developers.google.com/google-ads/api/docs/release-notes
 * Sunset dates:  https://developers.google.com/google-ads/api/docs/sunset-dates
 */
export const GOOGLE_ADS_API_VERSION = 'v26'

/**
 * The UET Conversions API version the Microsoft Advertising adapter speaks: the `/v1/` path segment of
 * `https://capi.uet.microsoft.com/v1/{tagId}/events`. It is the only version Microsoft has published.
 *
 * Guide (changes to the API are made there, dated in its header):
 *   https://learn.microsoft.com/en-us/advertising/guides/uet-conversion-api-integration
 * Microsoft Advertising API release notes: https://learn.microsoft.com/en-us/advertising/guides/release-notes
 *
 * To upgrade: read the guide's changes, change this constant and the mapping in map.ts in place, and accept the
 * snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const MICROSOFT_ADS_API_VERSION = 'v1'

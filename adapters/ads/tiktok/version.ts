/**
 * The TikTok API for Business version the TikTok adapter speaks. Events API 2.0 lives at
 * POST /open_api/v1.3/event/track/; v1.3 is the current version of the whole API for Business (the older
 * v1.2 /pixel/track/ and /pixel/batch/ endpoints are the legacy Events API 1.0).
 *
 * API for Business docs and changelog: https://business-api.tiktok.com/portal/docs
 * Events API 2.0 (the endpoint this adapter calls): https://business-api.tiktok.com/portal/docs?id=1771100865818625
 *
 * To upgrade: read the changelog entries for Events API 2.0, change this constant and the mapping in map.ts in
 * place, and accept the snapshot diff in test/adapters/__snapshots__/ad-platforms.test.ts.snap.
 */
export const TIKTOK_API_VERSION = 'v1.3'

/**
 * The HubSpot API this poller speaks: CRM v3 search, `POST /crm/v3/objects/contacts/search`.
 *
 * HubSpot also publishes date-versioned paths (`/crm/objects/2026-03/contacts/search`); v3 is still served and is
 * what the search guide documents. Request and answer shapes, limits (10,000 results a query, 5 filter groups, at
 * most 200 a page) and error bodies are read in map.ts and response.ts.
 *
 * Changelog:     https://developers.hubspot.com/changelog
 * Search guide:  https://developers.hubspot.com/docs/guides/api/crm/search
 *
 * To upgrade: read the changelog, change this constant and the path in map.ts in place.
 */
export const HUBSPOT_API_VERSION = 'v3'

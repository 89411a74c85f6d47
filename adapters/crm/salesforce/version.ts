/**
 * The Salesforce REST API version this poller speaks: v66.0 (Spring '26), `GET /services/data/v66.0/query?q=<SOQL>`.
 * The OAuth 2.0 token endpoint (`/services/oauth2/token`) is not versioned. Salesforce keeps old versions for years
 * but retires the oldest ones; the query resource, its paging (`nextRecordsUrl`) and its error bodies have not
 * changed across recent versions.
 *
 * Release notes:  https://help.salesforce.com/s/articleView?id=release-notes.salesforce_release_notes.htm
 * REST API guide: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_query.htm
 *
 * To upgrade: read the release notes' API section, change this constant in place (the fake reads it too).
 */
export const SALESFORCE_API_VERSION = 'v66.0'

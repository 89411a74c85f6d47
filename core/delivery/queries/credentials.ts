/**
 * Refresh tokens an ad platform issued in place of the configured ones (platform_credentials): the adapter's
 * `AuthContext.credentials`, per site and platform, shared by every instance and kept across restarts.
 */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import type { CredentialStore } from '../../registry.ts'

/** $1 site, $2 platform, $3 basis. The stored token, only when it descends from these configured credentials. */
const READ_ISSUED: PreparedStatement = {
  name: 'dcgate_read_platform_credential_v1',
  text: `select issued_token from platform_credentials where site_id = $1 and platform = $2 and basis = $3`,
}

/** $1 site, $2 platform, $3 basis, $4 token. Replaces whatever was stored, for this basis or another. */
const STORE_ISSUED: PreparedStatement = {
  name: 'dcgate_store_platform_credential_v1',
  text: `insert into platform_credentials (site_id, platform, basis, issued_token, updated_at) values ($1, $2, $3, $4, now())
    on conflict (site_id, platform) do update set basis = excluded.basis, issued_token = excluded.issued_token, updated_at = now()`,
}

/** The credential store a site's connection to an ad platform hands its adapter. */
export function platformCredentials(prepared: RunPrepared, siteId: string, platform: string): CredentialStore {
  return {
    get: async (basis) => (await prepared<{ issued_token: string }>(READ_ISSUED, [siteId, platform, basis]))[0]?.issued_token ?? null,
    set: async (basis, value) => {
      await prepared(STORE_ISSUED, [siteId, platform, basis, value])
    },
  }
}

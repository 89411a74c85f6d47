/**
 * Refresh tokens an ad platform issued in place of the configured ones (platform_credentials): the adapter's
 * `AuthContext.credentials`, per site and platform, shared by every instance and kept across restarts. Stored sealed
 * with the server secret (core/secrets/keyring.ts), and deleted when their site or platform leaves the config.
 */
import type { ConsolaInstance } from 'consola'
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import type { CredentialStore } from '../../registry.ts'
import type { Keyring } from '../../secrets/keyring.ts'
import { resealStored } from '../../secrets/reseal.ts'

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

/** $1 sites, $2 platforms (pairwise: the configured connections). Deletes the tokens of every other one. */
const DROP_UNCONFIGURED: PreparedStatement = {
  name: 'dcgate_drop_unconfigured_platform_credentials',
  text: `delete from platform_credentials p where not exists (
      select 1 from unnest($1::text[], $2::text[]) as c(site_id, platform) where c.site_id = p.site_id and c.platform = p.platform)
    returning site_id, platform`,
}
const READ_ALL: PreparedStatement = {
  name: 'dcgate_read_all_platform_credentials',
  text: 'select site_id, platform, issued_token from platform_credentials',
}
/** $1 site, $2 platform, $3 the token as read, $4 the token sealed anew: unless another instance changed it meanwhile. */
const RESEAL: PreparedStatement = {
  name: 'dcgate_reseal_platform_credential',
  text: 'update platform_credentials set issued_token = $4 where site_id = $1 and platform = $2 and issued_token = $3',
}

/** A site's connection to an ad platform (or a CRM). */
export interface Connection { siteId: string, platform: string }

const place = (siteId: string, platform: string) => `platform_credentials\u0000${siteId}\u0000${platform}`

/** The credential store a site's connection to an ad platform hands its adapter. A token that does not open is absent. */
export function platformCredentials(prepared: RunPrepared, keyring: Keyring, siteId: string, platform: string): CredentialStore {
  return {
    get: async (basis) => {
      const stored = (await prepared<{ issued_token: string }>(READ_ISSUED, [siteId, platform, basis]))[0]?.issued_token
      return stored === undefined ? null : keyring.open('platform-credential', stored, place(siteId, platform)) ?? null
    },
    set: async (basis, value) => {
      await prepared(STORE_ISSUED, [siteId, platform, basis, keyring.seal('platform-credential', value, place(siteId, platform))])
    },
  }
}

/**
 * At start, after the sites are synced: deletes the tokens of sites and platforms no longer configured, and seals
 * those stored in clear (before encryption) or under a previous server secret with the current one.
 */
export async function tidyPlatformCredentials(prepared: RunPrepared, keyring: Keyring, connections: readonly Connection[], logger: ConsolaInstance): Promise<void> {
  const dropped = await prepared<{ site_id: string, platform: string }>(DROP_UNCONFIGURED, [connections.map((c) => c.siteId), connections.map((c) => c.platform)])
  for (const row of dropped) logger.info(`Deleted the stored ${row.platform} token of site "${row.site_id}": that connection is no longer configured`)
  const rows = await prepared<{ site_id: string, platform: string, issued_token: string }>(READ_ALL, [])
  await resealStored(keyring, 'platform-credential', rows,
    (row) => ({ place: place(row.site_id, row.platform), value: row.issued_token, label: `The stored ${row.platform} token of site "${row.site_id}"` }),
    (row, sealed) => prepared(RESEAL, [row.site_id, row.platform, row.issued_token, sealed]).then(() => {}), logger)
}

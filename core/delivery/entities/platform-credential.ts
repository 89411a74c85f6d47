import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/**
 * A refresh token an ad platform issued in place of the configured one (rotation: Microsoft Advertising answers each
 * refresh with a new one), kept per site and platform so restarts and every instance use the newest. `basis` is a
 * hash of the configured credentials it descends from: a newly configured token starts fresh. The token is a secret,
 * stored sealed with the server secret (core/secrets/keyring.ts) and never logged; no personal data. Written only by
 * SQL (core/delivery/queries/credentials.ts).
 */
export const PlatformCredential = defineEntity({
  name: 'PlatformCredential',
  tableName: 'platform_credentials',
  properties: {
    siteId: p.string().length(64).primary(),
    platform: p.string().length(64).primary(),
    basis: p.string().length(128),
    issuedToken: p.text(),
    updatedAt: p.datetime(6).defaultRaw('now()'),
  },
})
export type IPlatformCredential = InferEntity<typeof PlatformCredential>

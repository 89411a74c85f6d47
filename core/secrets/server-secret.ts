import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The server secret: the key material every value dcgate encrypts at rest is derived from (keyring.ts). Resolved as
 * the admin token is: `server.secret` (or DCGATE_SERVER_SECRET), else `<dataDir>/server-secret`, generated there
 * (mode 0600) on first boot. `server.previousSecrets` (DCGATE_PREVIOUS_SERVER_SECRETS) keeps values written under
 * an earlier secret readable while a rotation runs (docs/security.md).
 */
export interface ServerSecrets {
  current: string
  previous: readonly string[]
}

export function serverSecretFile(dataDir: string): string {
  return join(dataDir, 'server-secret')
}

export function resolveServerSecrets(configured: { secret?: string, previousSecrets?: readonly string[] }, dataDir: string): ServerSecrets {
  const previous = configured.previousSecrets ?? []
  if (configured.secret) return { current: configured.secret, previous }
  const file = serverSecretFile(dataDir)
  if (existsSync(file)) return { current: readFileSync(file, 'utf8').trim(), previous }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return { current: secret, previous }
}

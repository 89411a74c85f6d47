import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export function adminTokenFile(dataDir: string): string {
  return join(dataDir, 'admin-token')
}

/** The configured token, else the one in <dataDir>/admin-token, generated there (mode 0600) on first boot. */
export function resolveAdminToken(configured: string | undefined, dataDir: string): string {
  if (configured) return configured
  const file = adminTokenFile(dataDir)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const token = randomBytes(32).toString('base64url')
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return token
}

/** For the CLI: the token from the environment or the data dir, or undefined when there is none yet. */
export function readAdminToken(configured: string | undefined, dataDir: string): string | undefined {
  if (configured) return configured
  const file = adminTokenFile(dataDir)
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined
}

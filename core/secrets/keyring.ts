/**
 * Encryption at rest with keys derived from the server secret (server-secret.ts): AES-256-GCM, one key per purpose
 * derived with HKDF-SHA256, a random 96-bit IV per value, and the value's place (table, row) as additional data so
 * a sealed value copied to another row does not open. A sealed value names the key it was sealed with by a
 * fingerprint, so values sealed under a previous secret still open during a rotation, and are found for resealing.
 *
 *   dcs1.<key id>.<iv>.<ciphertext>.<tag>   (base64url parts; the key id is 12 hex characters)
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import type { ServerSecrets } from './server-secret.ts'

const PREFIX = 'dcs1'
const SEALED = /^dcs1\.([0-9a-f]{12})\.([\w-]{16})\.([\w-]*)\.([\w-]{22})$/

/** What a sealed value is for: each purpose has keys of its own. */
export type SealPurpose = 'platform-credential' | 'auth-cache' | 'personal-data' | 'site-config'

export interface Keyring {
  /** Encrypts `plain` for `purpose`, bound to `place` (e.g. the row's key). */
  seal: (purpose: SealPurpose, plain: string, place: string) => string
  /** The plain value, or undefined when it was sealed with a secret this server no longer has, or was altered. */
  open: (purpose: SealPurpose, sealed: string, place: string) => string | undefined
  /** Whether a stored value is sealed at all (a value written before encryption is not). */
  isSealed: (value: string) => boolean
  /** Whether a sealed value was sealed with a previous secret, so it should be sealed again with the current one. */
  isStale: (sealed: string) => boolean
}

export function createKeyring(secrets: ServerSecrets): Keyring {
  const current = keyId(secrets.current)
  const byId = new Map([secrets.current, ...secrets.previous].map((secret) => [keyId(secret), secret] as const))
  const keys = new Map<string, Buffer>()
  const keyOf = (id: string, purpose: SealPurpose) => {
    const cached = keys.get(`${id}:${purpose}`)
    if (cached) return cached
    const secret = byId.get(id)
    if (secret === undefined) return undefined
    const key = Buffer.from(hkdfSync('sha256', secret, 'dcgate server secret', `dcgate ${purpose} v1`, 32))
    keys.set(`${id}:${purpose}`, key)
    return key
  }
  return {
    seal(purpose, plain, place) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', keyOf(current, purpose)!, iv)
      cipher.setAAD(Buffer.from(`${purpose}\u0000${place}`))
      const text = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [PREFIX, current, iv.toString('base64url'), text.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.')
    },
    open(purpose, sealed, place) {
      const parts = SEALED.exec(sealed)
      const key = parts && keyOf(parts[1]!, purpose)
      if (!parts || !key) return undefined
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[2]!, 'base64url'))
        decipher.setAAD(Buffer.from(`${purpose}\u0000${place}`))
        decipher.setAuthTag(Buffer.from(parts[4]!, 'base64url'))
        return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]).toString('utf8')
      }
      catch {
        return undefined
      }
    },
    isSealed: (value) => SEALED.test(value),
    isStale: (sealed) => SEALED.exec(sealed)?.[1] !== current,
  }
}

/** A fingerprint of a secret that reveals nothing of it: which secret sealed a value. */
function keyId(secret: string): string {
  return createHmac('sha256', secret).update('dcgate key id').digest('hex').slice(0, 12)
}

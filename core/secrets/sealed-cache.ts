import type { Storage } from 'unstorage'
import type { Keyring } from './keyring.ts'

/**
 * The token cache an adapter's AuthContext gets (OAuth access tokens, CRM sessions), kept in the shared storage
 * under `prefix` for the token's lifetime, sealed with the server secret: with Redis, the tokens sit in Redis.
 * A value that does not open (sealed under a secret since rotated out) is a miss: the adapter signs in again.
 */
export function createSealedCache(storage: Storage, keyring: Keyring, prefix: string) {
  return {
    get: async (key: string): Promise<string | null> => {
      const sealed = await storage.getItem<string>(`${prefix}${key}`)
      return typeof sealed === 'string' ? keyring.open('auth-cache', sealed, `${prefix}${key}`) ?? null : null
    },
    set: (key: string, value: string, ttlSeconds: number): Promise<void> =>
      storage.setItem(`${prefix}${key}`, keyring.seal('auth-cache', value, `${prefix}${key}`), { ttl: ttlSeconds }),
  }
}

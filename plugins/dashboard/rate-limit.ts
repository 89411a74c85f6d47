import { createHash } from 'node:crypto'
import type { Storage } from 'unstorage'
import { overLimit as overSharedLimit } from '../../core/http/rate-limit.ts'

export { ipSubject } from '../../core/http/rate-limit.ts'

/**
 * Counts one sign-in attempt of `subject` (an IP group or an address) under the limit `name`; the subject is stored
 * hashed, so the storage holds no address. Returns the seconds to wait when over `limit`, else undefined.
 */
export function overLimit(storage: Storage, name: string, subject: string, limit: number, windowSeconds: number, now = Date.now()): Promise<number | undefined> {
  return overSharedLimit(storage, `dashboard:${name}:${createHash('sha256').update(subject).digest('hex').slice(0, 32)}`, limit, windowSeconds, now)
}

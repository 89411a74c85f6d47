import type { Storage } from 'unstorage'
import { ipSubject, overLimit } from '../../core/http/rate-limit.ts'

/** Public deletion requests one address may send per window: enough for a family behind one router, not for spam. */
export const IP_LIMIT = 10
export const IP_WINDOW_SECONDS = 3600

/**
 * Per-IP limit of the public deletion route (core/http/rate-limit.ts: a fixed window in the shared storage; IPv6
 * counts per /64). Returns the seconds to wait when over the limit, else undefined.
 */
export function overIpLimit(storage: Storage, ip: string | undefined, now = Date.now()): Promise<number | undefined> {
  return overLimit(storage, `dsar:ip:${ipSubject(ip)}`, IP_LIMIT, IP_WINDOW_SECONDS, now)
}

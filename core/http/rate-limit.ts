import ipaddr from 'ipaddr.js'
import type { Storage } from 'unstorage'
import { limitCounters } from '../storage.ts'

/**
 * Counts one attempt under `key` (`<limiter>:<subject>`) in a fixed window, atomically: an INCR in Redis, shared by
 * every instance, or one synchronous step in memory (core/limit-counters.ts), so parallel attempts cannot slip past
 * the limit between a read and a write. Every attempt counts, refused ones too. Returns the seconds to wait when
 * `limit` attempts were already counted in this window, else undefined.
 */
export async function overLimit(storage: Storage, key: string, limit: number, windowSeconds: number, now = Date.now()): Promise<number | undefined> {
  const { count, resetInMs } = await limitCounters(storage).count(key, windowSeconds * 1000, now)
  return count > limit ? Math.max(1, Math.ceil(resetInMs / 1000)) : undefined
}

/** The address an IP limit counts by: IPv4 as it is (mapped IPv6 too), IPv6 per /64, which one subscriber usually holds whole. */
export function ipSubject(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown'
  let address = ipaddr.parse(ip)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address()
  if (address.kind() === 'ipv4') return address.toString()
  return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`
}

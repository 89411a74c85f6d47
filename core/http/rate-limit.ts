import ipaddr from 'ipaddr.js'
import type { Storage } from 'unstorage'

interface Window { count: number, resetAt: number }

/**
 * Counts one attempt under `key` in a fixed window, in the shared storage under `limits:` (core/storage.ts: never
 * evicted by cache traffic, expiring with the window), so every instance counts together. Returns the seconds to
 * wait when `limit` attempts were already counted in this window, else undefined.
 */
export async function overLimit(storage: Storage, key: string, limit: number, windowSeconds: number, now = Date.now()): Promise<number | undefined> {
  const stored = `limits:${key}`
  const seen = await storage.getItem<Window>(stored)
  const window = seen && seen.resetAt > now ? seen : { count: 0, resetAt: now + windowSeconds * 1000 }
  const wait = Math.max(1, Math.ceil((window.resetAt - now) / 1000))
  if (window.count >= limit) return wait
  window.count += 1
  await storage.setItem(stored, window, { ttl: wait })
  return undefined
}

/** The address an IP limit counts by: IPv4 as it is (mapped IPv6 too), IPv6 per /64, which one subscriber usually holds whole. */
export function ipSubject(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown'
  let address = ipaddr.parse(ip)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address()
  if (address.kind() === 'ipv4') return address.toString()
  return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`
}

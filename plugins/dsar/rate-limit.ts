import ipaddr from 'ipaddr.js'
import type { Storage } from 'unstorage'

/** Public deletion requests one address may send per window: enough for a family behind one router, not for spam. */
export const IP_LIMIT = 10
export const IP_WINDOW_SECONDS = 3600

interface Window { count: number, resetAt: number }

/**
 * Per-IP limit of the public deletion route, in the shared storage (Redis when configured, so every instance
 * counts together). A fixed window per address; IPv6 counts per /64, which one subscriber usually holds whole.
 * Counters live under `limits:`, which other traffic cannot evict (core/storage.ts), and expire with the window.
 * Returns the seconds to wait when over the limit, else undefined.
 */
export async function overIpLimit(storage: Storage, ip: string | undefined, now = Date.now()): Promise<number | undefined> {
  const key = `limits:dsar:ip:${bucket(ip)}`
  const seen = await storage.getItem<Window>(key)
  const window = seen && seen.resetAt > now ? seen : { count: 0, resetAt: now + IP_WINDOW_SECONDS * 1000 }
  if (window.count >= IP_LIMIT) return Math.max(1, Math.ceil((window.resetAt - now) / 1000))
  window.count += 1
  await storage.setItem(key, window, { ttl: Math.max(1, Math.ceil((window.resetAt - now) / 1000)) })
  return undefined
}

function bucket(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return 'unknown'
  let address = ipaddr.parse(ip)
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address()
  if (address.kind() === 'ipv4') return address.toString()
  return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`
}

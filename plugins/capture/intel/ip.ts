/**
 * IP addresses as numbers, for binary search in the range tables. IPv4 is one unsigned 32-bit number; IPv6 keeps
 * its top 64 bits as two unsigned 32-bit halves, because every list and dataset we match against allocates IPv6
 * space in blocks of a /64 or larger (the low 64 bits name one host inside a subscriber's network).
 */
import ipaddr from 'ipaddr.js'
import { dottedQuad } from '../../../core/http/client-ip.ts'

export type IpKey =
  | { readonly v: 4, readonly n: number }
  | { readonly v: 6, readonly hi: number, readonly lo: number }

export interface ParsedIp {
  key: IpKey
  /** The address as the geo reader wants it: dotted quad for IPv4 and IPv4-mapped IPv6, else the IPv6 text. */
  text: string
}

/** Parse a client address; undefined when it is not an IP address (never throws). */
export function parseIp(ip: string | undefined | null): ParsedIp | undefined {
  if (!ip) return undefined
  const n = dottedQuad(ip)
  if (n !== undefined) return { key: { v: 4, n }, text: ip }
  if (!ip.includes(':') || ip.length > 64) return undefined
  let address: ipaddr.IPv4 | ipaddr.IPv6
  try {
    address = ipaddr.process(ip) // also turns ::ffff:1.2.3.4 into 1.2.3.4
  } catch {
    return undefined
  }
  if (address.kind() === 'ipv4') {
    const text = address.toString()
    return { key: { v: 4, n: dottedQuad(text)! }, text }
  }
  const parts = (address as ipaddr.IPv6).parts
  return {
    key: { v: 6, hi: ((parts[0]! << 16) | parts[1]!) >>> 0, lo: ((parts[2]! << 16) | parts[3]!) >>> 0 },
    text: address.toString(),
  }
}

/** The 32-bit mask for the first `bits` bits (0..32). */
export function mask32(bits: number): number {
  if (bits <= 0) return 0
  if (bits >= 32) return 0xffffffff
  return (0xffffffff << (32 - bits)) >>> 0
}

/** First and last IpKey of a CIDR block ("1.2.3.0/24", "2600:1f00::/40") or of a single address. */
export function cidrBounds(cidr: string): { start: IpKey, end: IpKey } | undefined {
  let address: ipaddr.IPv4 | ipaddr.IPv6
  let prefix: number
  try {
    if (cidr.includes('/')) [address, prefix] = ipaddr.parseCIDR(cidr)
    else {
      address = ipaddr.parse(cidr)
      prefix = address.kind() === 'ipv4' ? 32 : 128
    }
  } catch {
    return undefined
  }
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address()
    prefix = Math.max(0, prefix - 96)
  }
  if (address.kind() === 'ipv4') {
    const o = (address as ipaddr.IPv4).octets
    const n = ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0
    const m = mask32(prefix)
    const start = (n & m) >>> 0
    return { start: { v: 4, n: start }, end: { v: 4, n: (start | (~m >>> 0)) >>> 0 } }
  }
  const p = (address as ipaddr.IPv6).parts
  const hi = ((p[0]! << 16) | p[1]!) >>> 0
  const lo = ((p[2]! << 16) | p[3]!) >>> 0
  const mHi = mask32(prefix)
  const mLo = mask32(prefix - 32)
  const sHi = (hi & mHi) >>> 0
  const sLo = (lo & mLo) >>> 0
  return {
    start: { v: 6, hi: sHi, lo: sLo },
    end: { v: 6, hi: (sHi | (~mHi >>> 0)) >>> 0, lo: (sLo | (~mLo >>> 0)) >>> 0 },
  }
}

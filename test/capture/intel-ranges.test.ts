/** The address parsing and range tables under every lookup of plugins/capture/intel. */
import { describe, expect, it } from 'vitest'
import { cidrBounds, parseIp } from '../../plugins/capture/intel/ip.ts'
import { formatList, kindOf, parseList } from '../../plugins/capture/intel/lists.ts'
import { RangeBuilder } from '../../plugins/capture/intel/ranges.ts'

const key = (ip: string) => parseIp(ip)!.key

describe('parseIp', () => {
  it('reads dotted quads, IPv6 and IPv4-mapped IPv6', () => {
    expect(parseIp('0.0.0.0')?.key).toEqual({ v: 4, n: 0 })
    expect(parseIp('255.255.255.255')?.key).toEqual({ v: 4, n: 0xffffffff })
    expect(parseIp('8.8.8.8')).toEqual({ key: { v: 4, n: 0x08080808 }, text: '8.8.8.8' })
    expect(parseIp('::ffff:8.8.8.8')).toEqual({ key: { v: 4, n: 0x08080808 }, text: '8.8.8.8' })
    expect(parseIp('2a00:1450:4001:80b::200e')?.key).toEqual({ v: 6, hi: 0x2a001450, lo: 0x4001080b })
  })

  it('refuses what is not an address', () => {
    for (const bad of ['', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.4 ', 'a.b.c.d', ':::', 'localhost', '1'.repeat(70)]) {
      expect(parseIp(bad), bad).toBeUndefined()
    }
    expect(parseIp(undefined)).toBeUndefined()
  })
})

describe('cidrBounds', () => {
  it('gives the first and last address of a block', () => {
    expect(cidrBounds('10.1.2.0/23')).toEqual({ start: key('10.1.2.0'), end: key('10.1.3.255') })
    expect(cidrBounds('10.1.2.77/24')).toEqual({ start: key('10.1.2.0'), end: key('10.1.2.255') })
    expect(cidrBounds('0.0.0.0/0')).toEqual({ start: key('0.0.0.0'), end: key('255.255.255.255') })
    expect(cidrBounds('1.2.3.4')).toEqual({ start: key('1.2.3.4'), end: key('1.2.3.4') })
    expect(cidrBounds('2600:1f00::/24')).toEqual({ start: { v: 6, hi: 0x26001f00, lo: 0 }, end: { v: 6, hi: 0x26001fff, lo: 0xffffffff } })
    expect(cidrBounds('2001:db8:1:2::/64')).toEqual({ start: { v: 6, hi: 0x20010db8, lo: 0x10002 }, end: { v: 6, hi: 0x20010db8, lo: 0x10002 } })
    // longer than /64: the whole /64 (one subscriber's network)
    expect(cidrBounds('2001:db8:1:2::5/128')).toEqual(cidrBounds('2001:db8:1:2::/64'))
    expect(cidrBounds('::ffff:10.0.0.0/104')).toEqual(cidrBounds('10.0.0.0/8'))
  })

  it('refuses garbage', () => {
    expect(cidrBounds('10.0.0.0/33')).toBeUndefined()
    expect(cidrBounds('nope')).toBeUndefined()
  })
})

describe('RangeBuilder', () => {
  it('finds the range holding an address, at its edges, and nothing between ranges', () => {
    const builder = new RangeBuilder()
    builder.addCidr('10.0.0.0/24', 1)
    builder.addCidr('10.0.2.0/24', 2)
    builder.addCidr('2001:db8::/32', 3)
    const table = builder.build()
    expect(table.lookup(key('10.0.0.0'))).toBe(1)
    expect(table.lookup(key('10.0.0.255'))).toBe(1)
    expect(table.lookup(key('10.0.1.0'))).toBeUndefined()
    expect(table.lookup(key('10.0.2.128'))).toBe(2)
    expect(table.lookup(key('9.255.255.255'))).toBeUndefined()
    expect(table.lookup(key('10.0.3.0'))).toBeUndefined()
    expect(table.lookup(key('2001:db8:ffff::1'))).toBe(3)
    expect(table.lookup(key('2001:db9::1'))).toBeUndefined()
  })

  it('sorts unsorted input, merges same-valued neighbours and lets the outer range win a nesting', () => {
    const builder = new RangeBuilder()
    builder.addCidr('10.0.1.0/24', 7)
    builder.addCidr('10.0.0.0/24', 7)
    builder.addCidr('10.0.0.128/25', 9) // nested in a range with another value
    builder.addCidr('10.0.1.128/24', 8) // same block as 10.0.1.0/24 after masking
    builder.addCidr('10.0.1.200', 5)
    const table = builder.build()
    expect(table.size).toBe(1)
    expect(table.lookup(key('10.0.0.200'))).toBe(7)
    expect(table.lookup(key('10.0.1.200'))).toBe(7)
  })

  it('trims a partly overlapping range with another value to the part outside', () => {
    const builder = new RangeBuilder()
    builder.add4(100, 200, 1)
    builder.add4(150, 300, 2)
    const table = builder.build()
    expect(table.lookup({ v: 4, n: 200 })).toBe(1)
    expect(table.lookup({ v: 4, n: 201 })).toBe(2)
    expect(table.lookup({ v: 4, n: 300 })).toBe(2)
  })

  it('counts entries that are not an address', () => {
    const builder = new RangeBuilder()
    expect(builder.addCidr('1.2.3.0/24', 0)).toBe(true)
    expect(builder.addCidr('# comment', 0)).toBe(false)
    expect(builder.rejected).toBe(1)
  })
})

describe('list files', () => {
  it('round-trip their header and entries; comments after an entry are dropped', () => {
    const text = formatList({ name: 'cloud-x', date: '2026-11-21' }, ['1.2.3.0/24', '2001:db8::/32'])
    expect(parseList(`${text}# a note: not a header key after the first\n5.6.7.8 the rest is a comment\n`)).toEqual({
      header: { name: 'cloud-x', date: '2026-11-21' },
      entries: ['1.2.3.0/24', '2001:db8::/32', '5.6.7.8'],
    })
  })

  it('take their meaning from their name', () => {
    expect(['tor-exits', 'cloud-aws', 'vpn-proton', 'proxy-icloud-relay', 'hosting-asns', 'vpn-asns', 'other'].map(kindOf))
      .toEqual(['tor', 'hosting', 'vpn', 'proxy', 'hosting-asns', 'vpn-asns', undefined])
  })
})

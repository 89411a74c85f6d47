import { describe, expect, it } from 'vitest'
import { toBatch } from '../../plugins/capture/hits.ts'
import type { CollectBody } from '../../plugins/capture/protocol.ts'
import type { VisitInfo } from '../../plugins/capture/intel/types.ts'

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const verdict: VisitInfo = { isVpn: false, isProxy: false, isTor: false, isHosting: false, networkSources: [], isBot: false, botReasons: [] }
const at = (ms: number) => ({ siteId: 'shop', receivedAt: new Date(ms), verdict, personal: true })
const body = (hits: CollectBody['hits']): CollectBody => ({ v: 1, sid: 'session-0001', vid: 'visitor-0001', hits, consent: 'granted' })

describe('page event ids', () => {
  it('are UUIDv7: time first, so later hits sort after earlier ones and the primary key appends', () => {
    const early = toBatch(body([{ t: 'pageview', ts: 1_763_000_000_000, url: 'https://shop.example/' }]), at(1_763_000_000_000)).events[0]!.id
    const late = toBatch(body([{ t: 'pageview', ts: 1_763_000_000_500, url: 'https://shop.example/' }]), at(1_763_000_000_500)).events[0]!.id
    expect([early, late]).toEqual([expect.stringMatching(UUID7), expect.stringMatching(UUID7)])
    expect(early.slice(0, 13)).toBe('019a7afd-1e00') // 1,763,000,000,000 ms in the first 48 bits
    expect(early < late).toBe(true)
  })

  it('are the same for the same named hit sent again later, and differ between sites and hits', () => {
    const hit = { t: 'pageview', hid: 'hit-000000001', ts: 1_763_000_000_000, url: 'https://shop.example/' } as const
    const first = toBatch(body([hit]), at(1_763_000_000_100)).events[0]!.id
    const again = toBatch(body([hit]), at(1_763_000_090_000)).events[0]!.id
    const elsewhere = toBatch(body([hit]), { ...at(1_763_000_000_100), siteId: 'other' }).events[0]!.id
    const another = toBatch(body([{ ...hit, hid: 'hit-000000002' }]), at(1_763_000_000_100)).events[0]!.id
    expect(first).toMatch(UUID7)
    expect(again).toBe(first)
    expect(new Set([first, elsewhere, another]).size).toBe(3)
  })

  it('unnamed hits never share an id, even in the same millisecond', () => {
    const hits = Array.from({ length: 50 }, () => ({ t: 'pageview', ts: 1_763_000_000_000, url: 'https://shop.example/' }) as const)
    const ids = toBatch(body(hits), at(1_763_000_000_000)).events.map((e) => e.id)
    expect(new Set(ids).size).toBe(50)
    expect(ids.every((id) => UUID7.test(id))).toBe(true)
  })
})

import * as v from 'valibot'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { CLICK_ID_MAX_AGE_MS, extractClickIds, formatClickIds, newFbp, parseClickIds, stampClickIds, toFbc, withMetaCookies, withTagCookies } from '../../plugins/capture/client/click-ids.ts'
import { allowed, initialConsent, needsBanner } from '../../plugins/capture/client/consent.ts'
import { readCookie } from '../../plugins/capture/client/cookie.ts'
import { CLICK_ID_KEYS, PROTOCOL_VERSION, SCRIPT_TAG_ID } from '../../plugins/capture/client/constants.ts'
import { toDevice, toHex } from '../../plugins/capture/client/fingerprint.ts'
import { cleanEmail, cleanFields, cleanProps, pageView, trackedEvent } from '../../plugins/capture/client/hits.ts'
import { formatSession, isId, nextSession, parseSession, randomId, SESSION_TIMEOUT_MS } from '../../plugins/capture/client/ids.ts'
import { headlessHints } from '../../plugins/capture/client/signals.ts'
import { parseTagSrc } from '../../plugins/capture/client/tag.ts'
import { createBatcher } from '../../plugins/capture/client/transport.ts'
import * as protocol from '../../plugins/capture/protocol.ts'

const T = 1_760_000_000_000

describe('constants copied from the protocol', () => {
  it('match it', () => {
    expect(CLICK_ID_KEYS).toEqual(protocol.CLICK_ID_KEYS)
    expect(SCRIPT_TAG_ID).toBe(protocol.SCRIPT_TAG_ID)
    expect(PROTOCOL_VERSION).toBe(protocol.PROTOCOL_VERSION)
  })
})

describe('ids', () => {
  it('are 22 URL-safe characters the protocol accepts, different every time', () => {
    const ids = Array.from({ length: 200 }, () => randomId())
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(new Set(ids).size).toBe(200)
    expect(ids.every((id) => isId(id))).toBe(true)
    expect(randomId(new Uint8Array([0, 63, 64, 255]))).toBe('A_A_')
  })

  it('keep a session until 30 minutes pass without a hit', () => {
    const kept = { id: 'sessionAAAAAAAAAAAAAAA', last: T }
    const fresh = () => 'sessionBBBBBBBBBBBBBBB'
    expect(nextSession(kept, T + SESSION_TIMEOUT_MS - 1, fresh)).toEqual({ id: kept.id, last: T + SESSION_TIMEOUT_MS - 1 })
    expect(nextSession(kept, T + SESSION_TIMEOUT_MS, fresh)).toEqual({ id: 'sessionBBBBBBBBBBBBBBB', last: T + SESSION_TIMEOUT_MS })
    expect(nextSession(undefined, T, fresh).id).toBe('sessionBBBBBBBBBBBBBBB')
    expect(SESSION_TIMEOUT_MS).toBe(30 * 60 * 1000)
  })

  it('each hit restarts the 30 minutes', () => {
    let session = nextSession(undefined, T)
    const first = session.id
    for (let minute = 20; minute <= 200; minute += 20) session = nextSession(session, T + minute * 60_000)
    expect(session.id).toBe(first)
  })

  it('store a session as <id>.<ms> and read back only that shape', () => {
    const session = { id: 'abcdefgh_-12', last: T }
    expect(parseSession(formatSession(session))).toEqual(session)
    for (const bad of [undefined, '', 'short.1', 'abcdefgh_-12', 'abcdefgh_-12.x', 'abc$defgh12.5']) expect(parseSession(bad)).toBeUndefined()
  })
})

describe('click ids', () => {
  it('takes every known parameter from the landing URL', () => {
    const ids = extractClickIds('?gclid=G1&gbraid=GB&wbraid=WB&ttclid=TT&li_fat_id=LI&msclkid=MS&rdt_cid=RD&epik=EP&twclid=TW&ScCid=SC&utm_source=x', T)
    expect(ids).toEqual({ gclid: 'G1', gbraid: 'GB', wbraid: 'WB', ttclid: 'TT', li_fat_id: 'LI', msclkid: 'MS', rdt_cid: 'RD', epik: 'EP', twclid: 'TW', ScCid: 'SC' })
  })

  it("turns fbclid into Meta's fbc: fb.1.<ms first seen>.<fbclid>", () => {
    expect(toFbc('IwAR2x', T)).toBe(`fb.1.${T}.IwAR2x`)
    const first = extractClickIds('?fbclid=IwAR2x', T)
    expect(first).toEqual({ fbc: `fb.1.${T}.IwAR2x` })
    // The same click seen again keeps its first time; a new click replaces it.
    expect(extractClickIds('?fbclid=IwAR2x', T + 5000, first).fbc).toBe(`fb.1.${T}.IwAR2x`)
    expect(extractClickIds('?fbclid=Other', T + 5000, first).fbc).toBe(`fb.1.${T + 5000}.Other`)
    // The pixel's cookie may carry a fifth segment after the fbclid; the same click seen again keeps it and its time.
    const fromPixel = { fbc: `fb.1.${T}.IwAR2x.AQ` }
    expect(extractClickIds('?fbclid=IwAR2x', T + 5000, fromPixel).fbc).toBe(`fb.1.${T}.IwAR2x.AQ`)
  })

  it('keeps the latest value per key and the others as they were', () => {
    const kept = { gclid: 'old', msclkid: 'M' }
    expect(extractClickIds('?gclid=new', T, kept)).toEqual({ gclid: 'new', msclkid: 'M' })
    expect(kept).toEqual({ gclid: 'old', msclkid: 'M' })
  })

  it('matches names case-insensitively and ignores empty or oversized values', () => {
    expect(extractClickIds('?GCLID=a&sccid=b', T)).toEqual({ gclid: 'a', ScCid: 'b' })
    expect(extractClickIds(`?gclid=&ttclid=${'x'.repeat(481)}`, T)).toEqual({})
  })

  it('creates fbp like the pixel: fb.1.<ms>.<10 digits>', () => {
    expect(newFbp(T, 0)).toBe(`fb.1.${T}.1000000000`)
    expect(newFbp(T, 0.999999999)).toMatch(new RegExp(`^fb\\.1\\.${T}\\.9\\d{9}$`))
    for (let i = 0; i < 50; i++) expect(newFbp(T)).toMatch(/^fb\.1\.\d{13}\.\d{10}$/)
  })

  it("prefers the pixel's _fbp cookie, creates one only when allowed, and keeps the later fbc", () => {
    const cookies = `a=1; _fbp=fb.1.${T - 9}.1234567890; _fbc=fb.1.${T - 5}.FromPixel`
    expect(withMetaCookies({ fbp: 'fb.1.1.1111111111' }, cookies, T, false)).toEqual({ fbp: `fb.1.${T - 9}.1234567890`, fbc: `fb.1.${T - 5}.FromPixel` })
    expect(withMetaCookies({ fbc: `fb.1.${T}.FromUrl` }, cookies, T, false).fbc).toBe(`fb.1.${T}.FromUrl`)
    expect(withMetaCookies({}, '', T, false)).toEqual({})
    expect(withMetaCookies({}, '', T, true).fbp).toMatch(new RegExp(`^fb\\.1\\.${T}\\.\\d{10}$`))
  })

  it("takes the UET tag's visitor id from _uetvid, keeps the kept one without the cookie, and never makes one up", () => {
    expect(withTagCookies({ gclid: 'G' }, 'a=1; _uetvid=839d8b10dcb111ee9d98ad5bcaa80a53')).toEqual({ gclid: 'G', uetvid: '839d8b10dcb111ee9d98ad5bcaa80a53' })
    expect(withTagCookies({ uetvid: 'kept' }, '_uetvid=')).toEqual({ uetvid: 'kept' })
    expect(withTagCookies({}, '_uetsid=abc')).toEqual({})
    expect(withTagCookies({}, `_uetvid=${'a'.repeat(481)}`)).toEqual({})
  })

  it("takes the Google tag's client id from _ga and its session from _ga_<container>, and never makes one up", () => {
    const cookies = 'a=1; _ga=GA1.1.1197596843.1732780000; _ga_ABC123XYZ=GS1.1.1732786400.3.1.1732786500.0.0.0'
    expect(withTagCookies({ gclid: 'G' }, cookies)).toEqual({ gclid: 'G', ga: '1197596843.1732780000', ga_session: 'ABC123XYZ.1732786400' })
    // The newer GS2 session cookie: s<session>$o<count>…
    expect(withTagCookies({}, '_ga_ABC123XYZ=GS2.1.s1732786400$o3$g1$t1732786500$j60$l0$h0')).toEqual({ ga_session: 'ABC123XYZ.1732786400' })
    expect(withTagCookies({ ga: 'kept' }, '_ga=garbage')).toEqual({ ga: 'kept' })
    expect(withTagCookies({}, '_gid=GA1.1.1.2')).toEqual({})
  })

  it("takes the Snap Pixel's browser id from _scid, and never makes one up", () => {
    expect(withTagCookies({ ScCid: 'S' }, 'a=1; _scid=5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13')).toEqual({ ScCid: 'S', scid: '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13' })
    expect(withTagCookies({ scid: 'kept' }, '_scid=')).toEqual({ scid: 'kept' })
    expect(withTagCookies({}, '_scid_r=abc')).toEqual({})
  })

  it('reads cookies and stored ids defensively', () => {
    expect(readCookie('a=1; dc_vid=abc%3D; b=2', 'dc_vid')).toBe('abc=')
    expect(readCookie('a=1', 'dc_vid')).toBeUndefined()
    expect(readCookie('x=%E0%A4%A', 'x')).toBeUndefined()
    expect(parseClickIds('{"gclid":"G","evil":"x","fbp":5}', CLICK_ID_KEYS, T).ids).toEqual({ gclid: 'G' })
    expect(parseClickIds('not json', CLICK_ID_KEYS, T).ids).toEqual({})
  })

  it('keep a click id 90 days from when it was first seen; fbp, the browser id, stays', () => {
    const day = 86_400_000
    const first = stampClickIds({ ids: {}, seen: {} }, extractClickIds('?gclid=G&msclkid=M', T), T)
    const stored = formatClickIds(stampClickIds(first, { ...first.ids, fbp: 'fb.1.1.1234567890' }, T))
    // The same id seen again later keeps its first time; a new one starts its own.
    const later = stampClickIds(parseClickIds(stored, CLICK_ID_KEYS, T + 30 * day), extractClickIds('?msclkid=M2', T + 30 * day, first.ids), T + 30 * day)
    expect(later.seen).toEqual({ gclid: T, msclkid: T + 30 * day })
    expect(parseClickIds(formatClickIds(later), CLICK_ID_KEYS, T + 89 * day).ids).toEqual({ gclid: 'G', msclkid: 'M2' })
    expect(parseClickIds(formatClickIds(later), CLICK_ID_KEYS, T + CLICK_ID_MAX_AGE_MS + 1).ids).toEqual({ msclkid: 'M2' })
    expect(parseClickIds(stored, CLICK_ID_KEYS, T + 365 * day).ids).toEqual({ fbp: 'fb.1.1.1234567890' })
    // Ids kept before their times were stored count from now.
    expect(parseClickIds('{"gclid":"Old"}', CLICK_ID_KEYS, T + 365 * day)).toEqual({ ids: { gclid: 'Old' }, seen: { gclid: T + 365 * day } })
  })

  it('pass the protocol as clickIds', () => {
    const ids = withMetaCookies(extractClickIds('?gclid=G&fbclid=F&ScCid=S', T), '_fbp=fb.1.1.1234567890', T, true)
    expect(v.safeParse(protocol.CollectBody, { v: 1, hits: [pageView('https://a.example/', T)], clickIds: ids }).success).toBe(true)
  })
})

describe('the consent rule', () => {
  it("banner 'off' never asks and allows unless the site's CMP refused", () => {
    expect(allowed(initialConsent('off', undefined))).toBe(true)
    expect(needsBanner(initialConsent('off', undefined))).toBe(false)
    expect(allowed(initialConsent('off', 'denied'))).toBe(false)
  })

  it("banner 'always' asks everyone without a stored choice", () => {
    const state = initialConsent('always', undefined)
    expect([allowed(state), needsBanner(state)]).toEqual([false, true])
    expect(needsBanner(initialConsent('always', 'granted'))).toBe(false)
    expect(allowed(initialConsent('always', 'granted'))).toBe(true)
    expect(allowed(initialConsent('always', 'not-required'))).toBe(false)
  })

  it("banner 'eu' waits for the server, unless it already said no consent is required here", () => {
    const waiting = initialConsent('eu', undefined)
    expect([allowed(waiting), needsBanner(waiting), waiting.required]).toEqual([false, false, undefined])
    expect(needsBanner({ ...waiting, required: true })).toBe(true)
    expect(allowed({ ...waiting, required: false })).toBe(true)
    expect(allowed(initialConsent('eu', 'not-required'))).toBe(true)
    expect(allowed(initialConsent('eu', 'denied'))).toBe(false)
    expect(needsBanner(initialConsent('eu', 'denied'))).toBe(false)
  })
})

describe('hits and identify fields', () => {
  it('pass the protocol even from bad site input', () => {
    const props = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, i]))
    const event = trackedEvent('Lead', { ...props, long: 'x'.repeat(2000), obj: {}, fn: () => 1, [`${'k'.repeat(101)}`]: 1 }, { id: 42 }, `https://a.example/${'p'.repeat(5000)}`, T)!
    expect(Object.keys(event.props!)).toHaveLength(50)
    expect(event.id).toBe('42')
    const view = pageView('https://a.example/', T, 'https://ref.example/', 't'.repeat(600))
    expect(v.safeParse(protocol.CollectBody, { v: 1, hits: [view, event] }).issues).toBeUndefined()
  })

  it('gives every hit its own id, so a hit sent twice is stored once', () => {
    const a = pageView('https://a.example/', T)
    const b = pageView('https://a.example/', T)
    expect(a.hid).toMatch(/^[A-Za-z0-9_-]{8,64}$/)
    expect(a.hid).not.toBe(b.hid)
  })

  it('drops what cannot be fixed', () => {
    // The id a site already gives its Meta pixel, fbq('track', …, { eventID }), is taken as it is.
    expect(trackedEvent('Purchase', {}, { eventID: 'A-1001' }, 'https://a.example/', T)).toMatchObject({ id: 'A-1001' })
    expect(trackedEvent('', {}, undefined, 'https://a.example/', T)).toBeUndefined()
    expect(trackedEvent(5, {}, undefined, 'https://a.example/', T)).toBeUndefined()
    expect(trackedEvent('Lead', 'x', { id: '' }, 'https://a.example/', T)).toEqual({ t: 'event', hid: expect.stringMatching(/^[A-Za-z0-9_-]{8,64}$/), ts: T, url: 'https://a.example/', name: 'Lead' })
    expect(cleanProps({ a: 'x', b: null, c: false, d: undefined })).toEqual({ a: 'x', b: null, c: false })
  })

  it('trim emails and fields', () => {
    expect(cleanEmail('  Ann@Example.com ')).toBe('Ann@Example.com')
    for (const bad of ['', 'nope', 'a b@c.d', 5, undefined]) expect(cleanEmail(bad)).toBeUndefined()
    expect(cleanFields({ phone: ' +33 6 ', first_name: '', last_name: 'Lee', other: 'x' })).toEqual({ phone: '+33 6', last_name: 'Lee' })
    expect(cleanFields({ phone: 5 })).toBeUndefined()
  })
})

describe('bot signals', () => {
  const browser = { ua: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36', plugins: 5, languages: 2, outerWidth: 1280, outerHeight: 800, chrome: true, automation: false }

  it('finds nothing in an ordinary browser', () => {
    expect(headlessHints(browser)).toEqual([])
    expect(headlessHints({ ...browser, ua: 'Mozilla/5.0 (Linux; Android 14) Chrome/140.0 Mobile', plugins: 0 })).toEqual([])
  })

  it('names the hints of a headless browser', () => {
    expect(headlessHints({ ua: 'Mozilla/5.0 HeadlessChrome/140.0', plugins: 0, languages: 0, outerWidth: 0, outerHeight: 0, chrome: false, automation: true }))
      .toEqual(['HeadlessChrome-ua', 'no-plugins', 'no-languages', 'zero-outer-size', 'no-window-chrome', 'automation-globals'])
  })
})

describe('the device fingerprint', () => {
  it('is the SHA-256 of the properties, with the share it could read', async () => {
    const device = await toDevice(['1920x1080', 24, undefined, 'Europe/Paris'])
    expect(device.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(device.short).toBe(device.hash.slice(0, 12))
    expect(device.confidence).toBe(0.75)
    expect(device.version).toBe(1)
    expect((await toDevice(['1920x1080', 24, undefined, 'Europe/Paris'])).hash).toBe(device.hash)
    expect((await toDevice(['1920x1080', 24, undefined, 'Europe/Berlin'])).hash).not.toBe(device.hash)
    expect(v.safeParse(protocol.Device, device).success).toBe(true)
    expect(toHex(new Uint8Array([0, 15, 255]).buffer)).toBe('000fff')
  })
})

describe('the tag', () => {
  it('gives the request base and cop_key from the src', () => {
    expect(parseTagSrc('https://t.shop.example/script?cop_key=ck_123')).toEqual({ base: 'https://t.shop.example', copKey: 'ck_123' })
    expect(parseTagSrc('https://cdn.example/dc/script?cop_key=a%20b')).toEqual({ base: 'https://cdn.example/dc', copKey: 'a b' })
    expect(parseTagSrc('https://cdn.example/script')).toBeUndefined()
    expect(parseTagSrc(undefined)).toBeUndefined()
  })
})

describe('batching', () => {
  afterEach(() => void vi.useRealTimers())

  it('sends hits queued within a second together, at most 50 a request', () => {
    vi.useFakeTimers()
    const sent: [number[], boolean][] = []
    const batcher = createBatcher<number>((items, unloading) => void sent.push([items, unloading]))
    batcher.push(1)
    vi.advanceTimersByTime(500)
    batcher.push(2)
    expect(sent).toEqual([])
    vi.advanceTimersByTime(500)
    expect(sent).toEqual([[[1, 2], false]])
    for (let i = 0; i < 50; i++) batcher.push(i)
    expect(sent[1]![0]).toHaveLength(50)
    batcher.push(99)
    batcher.flush(true)
    expect(sent[2]).toEqual([[99], true])
    vi.advanceTimersByTime(2000)
    expect(sent).toHaveLength(3)
  })
})

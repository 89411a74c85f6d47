/**
 * Runs the rendered script in a node vm against a small fake browser (no jsdom here): what reaches /collect and
 * /identify, what is stored, and when. Real-browser tests come later; these check the wiring and the consent rule.
 */
import { runInContext, createContext } from 'node:vm'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { CollectBody, IdentifyBody } from '../../plugins/capture/protocol.ts'
import { CHUNKS, renderChunk, renderScript, type ChunkName, type ScriptSettings } from '../../plugins/capture/script.ts'

interface Sent { url: string, body: Record<string, any>, contentType?: string, beacon: boolean }
type Listener = (event: unknown) => void

async function browse(options: { settings: ScriptSettings, url?: string, scriptSrc?: string, stored?: Record<string, string>, cookie?: string, answer?: unknown, stub?: unknown, failStorage?: boolean, statuses?: number[], globals?: Record<string, unknown> }) {
  const credentials: string[] = []
  const sent: Sent[] = []
  const timers = new Map<number, () => void>()
  let timerId = 0
  const listeners: Record<string, Listener[]> = {}
  const on = (type: string, fn: Listener) => void (listeners[type] ??= []).push(fn)
  const storage = new Map(Object.entries(options.stored ?? {}))
  const cookies = new Map<string, string>()
  for (const part of (options.cookie ?? '').split(';').filter(Boolean)) cookies.set(part.split('=')[0]!.trim(), part.split('=').slice(1).join('='))
  let href = new URL(options.url ?? 'https://shop.example/landing?gclid=G-1&fbclid=FB-1')
  const banner: { root?: { innerHTML: string, click: Listener[] }, mounted: boolean, removed: boolean } = { mounted: false, removed: false }
  const failing = () => { if (options.failStorage) throw new Error('SecurityError') }

  const window: Record<string, unknown> = {
    document: {
      title: 'Landing', referrer: 'https://search.example/', visibilityState: 'visible', currentScript: null,
      get cookie() { return [...cookies].map(([k, val]) => `${k}=${val}`).join('; ') },
      set cookie(line: string) {
        const [pair] = line.split(';')
        const [k, ...val] = pair!.split('=')
        if (/max-age=0(;|$)/.test(line)) cookies.delete(k!)
        else cookies.set(k!, val.join('='))
      },
      getElementById: (id: string) => (id === 'dcgate-script' ? { src: options.scriptSrc ?? 'https://t.example/script?cop_key=ck_1' } : null),
      querySelector: () => null,
      documentElement: { getAttribute: () => null },
      addEventListener: on,
      body: { prepend: () => void (banner.mounted = true) },
      // A chunk of the script (GET /script/<name>) runs when its tag is added, as a browser would once it loaded.
      head: { appendChild: (tag: { src: string, onload: () => void }) => {
        const name = new URL(tag.src).pathname.split('/').pop() as ChunkName
        loaded.push(name)
        runInContext(chunks[name], context)
        tag.onload()
      } },
      createElement: (tag: string) => tag === 'dcgate-consent'
        ? { attachShadow: () => (banner.root = { innerHTML: '', click: [], addEventListener: (_: string, fn: Listener) => banner.root!.click.push(fn) } as never), remove: () => void (banner.removed = true) }
        : { getContext: () => null },
    },
    location: { get href() { return href.href }, get search() { return href.search }, get protocol() { return href.protocol }, get hostname() { return href.hostname } },
    history: { pushState: (_s: unknown, _t: string, url: string) => void (href = new URL(url, href)), replaceState: (_s: unknown, _t: string, url: string) => void (href = new URL(url, href)) },
    navigator: {
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36', webdriver: false, plugins: { length: 5 }, languages: ['fr-FR', 'en'], language: 'fr-FR',
      platform: 'Linux x86_64', hardwareConcurrency: 8, maxTouchPoints: 0,
      sendBeacon: (url: string, blob: Blob) => {
        void blob.text().then((text) => sent.push({ url, body: JSON.parse(text), contentType: blob.type, beacon: true }))
        return true
      },
    },
    screen: { width: 1920, height: 1080, availWidth: 1920, availHeight: 1040, colorDepth: 24 },
    localStorage: {
      getItem: (k: string) => (failing(), storage.get(k) ?? null),
      setItem: (k: string, val: string) => (failing(), void storage.set(k, val)),
      removeItem: (k: string) => (failing(), void storage.delete(k)),
    },
    fetch: async (url: string, init: { body: string, headers: Record<string, string>, keepalive: boolean, credentials: string }) => {
      expect(init.keepalive).toBe(true)
      credentials.push(init.credentials)
      sent.push({ url, body: JSON.parse(init.body), contentType: init.headers['content-type'], beacon: false })
      const status = options.statuses?.shift() ?? 202
      if (status !== 202) return { ok: false, status, headers: new Headers({ 'retry-after': '3' }), json: async () => ({ message: 'busy' }) }
      return { ok: true, status, json: async () => options.answer ?? { ok: true, consent: { required: false, banner: options.settings.banner } } }
    },
    setTimeout: (fn: () => void) => (timers.set(++timerId, fn), timerId),
    clearTimeout: (id: number) => void timers.delete(id),
    addEventListener: on,
    crypto: globalThis.crypto, performance, Intl, URL, URLSearchParams, Blob, TextEncoder,
    outerWidth: 1280, outerHeight: 800, devicePixelRatio: 1, chrome: {},
  }
  window.window = window
  if (options.stub) window.dcutils = options.stub
  Object.assign(window, options.globals)
  const script = await renderScript(options.settings)
  const chunks = Object.fromEntries(await Promise.all(Object.keys(CHUNKS).map(async (name) => [name, (await renderChunk(name as ChunkName, options.settings)).body]))) as Record<ChunkName, string>
  const loaded: ChunkName[] = []
  const context = createContext(window)
  runInContext(script.body, context)

  /** Runs due timers (the 1 s batch) and lets fetch answers and hashing settle. */
  async function tick(): Promise<void> {
    for (let round = 0; round < 5; round++) {
      for (const [id, fn] of [...timers]) {
        timers.delete(id)
        fn()
      }
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  type Call = (...args: unknown[]) => unknown
  const dcutils = () => window.dcutils as { track: Call, identifyUser: Call, consent: Call, sessionId: () => string | undefined, q: { push: Call } }
  const emit = (type: string, event: unknown = {}) => listeners[type]?.forEach((fn) => fn(event))
  const navigate = async (url: string) => {
    (window.history as { pushState: (...a: unknown[]) => void }).pushState({}, '', url)
    await tick()
  }
  await tick()
  return { sent, credentials, storage, cookies, banner, dcutils, emit, tick, navigate, window, loaded }
}

const collects = (sent: Sent[]) => sent.filter((s) => s.url.startsWith('https://t.example/collect?cop_key=ck_1'))
const identifies = (sent: Sent[]) => sent.filter((s) => s.url === 'https://t.example/identify?cop_key=ck_1')
const valid = (schema: v.GenericSchema, body: unknown) => expect(v.safeParse(schema, body).issues).toBeUndefined()

describe('a busy server', () => {
  it('sends hits answered 503 once more after Retry-After, and only once', async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' }, statuses: [503, 503, 503] })
    await page.tick()
    const [first, second, ...rest] = collects(page.sent)
    expect(second?.body).toEqual(first?.body)
    expect(rest).toHaveLength(0)
  })
})

describe("banner 'off'", () => {
  it('sends the page view with ids, click ids and signals, as text/plain, and stores them first-party', async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' } })
    const [hit] = collects(page.sent)
    expect(collects(page.sent)).toHaveLength(1)
    expect(hit!.contentType).toBe('text/plain')
    valid(CollectBody, hit!.body)
    expect(hit!.body).toMatchObject({
      v: 1, consent: 'unknown', lang: 'fr-FR', screen: { w: 1920, h: 1080 },
      hits: [{ t: 'pageview', url: 'https://shop.example/landing?gclid=G-1&fbclid=FB-1', ref: 'https://search.example/', title: 'Landing' }],
      clickIds: { gclid: 'G-1', fbc: expect.stringMatching(/^fb\.1\.\d{13}\.FB-1$/), fbp: expect.stringMatching(/^fb\.1\.\d{13}\.\d{10}$/) },
      signals: { webdriver: false, interactions: 0 },
    })
    expect(hit!.body.sid).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(page.storage.get('dc_vid')).toBe(hit!.body.vid)
    expect(page.cookies.get('dc_vid')).toBe(hit!.body.vid)
    expect(page.storage.get('dc_sid')).toMatch(new RegExp(`^${hit!.body.sid}\\.\\d+$`))
    const { _t: seen, ...kept } = JSON.parse(page.storage.get('dc_cids')!) as Record<string, unknown>
    expect(kept).toEqual(hit!.body.clickIds)
    expect(Object.keys(seen as object).sort()).toEqual(Object.keys(kept).sort())
    expect(page.dcutils().sessionId()).toBe(hit!.body.sid)
    expect(page.banner.mounted).toBe(false)
  })

  it("sends cookies only to a host of the page's own site (the first-party host), not to a shared script host", async () => {
    const shared = await browse({ settings: { forms: [], banner: 'off' } })
    expect(shared.credentials.length).toBeGreaterThan(0)
    expect(new Set(shared.credentials)).toEqual(new Set(['omit']))
    const firstParty = await browse({ settings: { forms: [], banner: 'off' }, scriptSrc: 'https://t.shop.example/script?cop_key=ck_1', url: 'https://www.shop.example/' })
    expect(firstParty.sent.length).toBeGreaterThan(0)
    expect(new Set(firstParty.credentials)).toEqual(new Set(['include']))
    // shop.co.uk's parent co.uk is a public suffix: t.co.uk is not the first-party host of shop.co.uk.
    const suffix = await browse({ settings: { forms: [], banner: 'off' }, scriptSrc: 'https://t.co.uk/script?cop_key=ck_1', url: 'https://shop.co.uk/' })
    expect(new Set(suffix.credentials)).toEqual(new Set(['omit']))
  })

  it('keeps the visitor and session across page loads', async () => {
    const first = await browse({ settings: { forms: [], banner: 'off' } })
    const stored = Object.fromEntries(first.storage)
    const second = await browse({ settings: { forms: [], banner: 'off' }, url: 'https://shop.example/next', stored })
    expect(collects(second.sent)[0]!.body).toMatchObject({ sid: collects(first.sent)[0]!.body.sid, vid: collects(first.sent)[0]!.body.vid, clickIds: { gclid: 'G-1' } })
  })

  it("keeps the Microsoft UET tag's visitor id (_uetvid) where the site runs the tag, also after 90 days", async () => {
    const uetvid = '839d8b10dcb111ee9d98ad5bcaa80a53'
    const page = await browse({ settings: { forms: [], banner: 'off' }, cookie: `_uetsid=839d68a0dcb111ee9ec2071df89e6b38; _uetvid=${uetvid}` })
    const [hit] = collects(page.sent)
    valid(CollectBody, hit!.body)
    expect(hit!.body.clickIds).toMatchObject({ gclid: 'G-1', uetvid })
    expect(JSON.parse(page.storage.get('dc_cids')!)).toMatchObject({ uetvid })
    // A later page load without the cookie (the tag removed) still sends the kept one, however old.
    const stored = { dc_cids: JSON.stringify({ uetvid, _t: { uetvid: Date.now() - 200 * 86_400_000 } }) }
    const later = await browse({ settings: { forms: [], banner: 'off' }, url: 'https://shop.example/next', stored })
    expect(collects(later.sent)[0]!.body.clickIds).toMatchObject({ uetvid })
    // No UET tag, no id: dcgate does not make one up.
    const without = await browse({ settings: { forms: [], banner: 'off' } })
    expect(collects(without.sent)[0]!.body.clickIds).not.toHaveProperty('uetvid')
  })

  it("keeps the Google tag's client id (_ga) and session (_ga_<container>) where the site runs gtag", async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' }, cookie: '_ga=GA1.1.1197596843.1732780000; _ga_ABC123XYZ=GS2.1.s1732786400$o3$g1$t1732786500$j60$l0$h0' })
    const [hit] = collects(page.sent)
    valid(CollectBody, hit!.body)
    expect(hit!.body.clickIds).toMatchObject({ ga: '1197596843.1732780000', ga_session: 'ABC123XYZ.1732786400' })
    const without = await browse({ settings: { forms: [], banner: 'off' } })
    expect(collects(without.sent)[0]!.body.clickIds).not.toHaveProperty('ga')
  })

  it("keeps the Snap Pixel's browser id (_scid) beside the ScCid click id", async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' }, url: 'https://shop.example/?ScCid=9c1e8a52', cookie: '_scid=5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13' })
    const [hit] = collects(page.sent)
    valid(CollectBody, hit!.body)
    expect(hit!.body.clickIds).toMatchObject({ ScCid: '9c1e8a52', scid: '5d3e1f0a-9c2b-4a7e-8f61-2b9d0c4e7a13' })
  })

  it('stops sending a kept click id 90 days after it was first seen', async () => {
    const day = 86_400_000
    const stored = { dc_cids: JSON.stringify({ gclid: 'G-old', msclkid: 'M-recent', _t: { gclid: Date.now() - 91 * day, msclkid: Date.now() - 10 * day } }) }
    const page = await browse({ settings: { forms: [], banner: 'off' }, url: 'https://shop.example/next', stored })
    const { clickIds } = collects(page.sent)[0]!.body as { clickIds: Record<string, string> }
    expect(clickIds.msclkid).toBe('M-recent')
    expect(clickIds.gclid).toBeUndefined()
  })

  it('replays calls queued by the stub, batches them, and identifies with the same ids', async () => {
    const stub = { q: [['track', 'Lead', { value: 10, nested: {} }, { id: 'order-1' }], ['identifyUser', ' ann@example.com ', { first_name: 'Ann' }], ['unknown', 1]] }
    const page = await browse({ settings: { forms: [], banner: 'off' }, stub })
    const [hit] = collects(page.sent)
    expect(hit!.body.hits).toMatchObject([{ t: 'pageview' }, { t: 'event', name: 'Lead', props: { value: 10 }, id: 'order-1' }])
    const [identify] = identifies(page.sent)
    valid(IdentifyBody, identify!.body)
    expect(identify!.body).toMatchObject({ email: 'ann@example.com', via: 'sdk', fields: { first_name: 'Ann' }, sid: hit!.body.sid, vid: hit!.body.vid })
    page.dcutils().q.push(['track', 'Later'])
    page.dcutils().track('Purchase', { value: 'x'.repeat(5000) })
    await page.tick()
    expect(collects(page.sent)[1]!.body.hits.map((h: { name: string }) => h.name)).toEqual(['Later', 'Purchase'])
  })

  it('counts SPA navigation once per URL (not for a #hash) with the previous URL as referrer', async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' }, url: 'https://shop.example/' })
    await page.navigate('/pricing')
    await page.navigate('/pricing')
    await page.navigate('/pricing#faq')
    const views = collects(page.sent).flatMap((s) => s.body.hits)
    expect(views.map((h: { url: string, ref: string }) => [h.url, h.ref])).toEqual([['https://shop.example/', 'https://search.example/'], ['https://shop.example/pricing', 'https://shop.example/']])
  })

  it('flushes with sendBeacon when the page is hidden', async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' } })
    page.dcutils().track('Lead')
    page.emit('pagehide')
    await page.tick()
    const last = page.sent.at(-1)!
    expect([last.beacon, last.contentType, last.body.hits[0].name]).toEqual([true, 'text/plain', 'Lead'])
  })

  it('identifies from a mapped form on submit, by beacon', async () => {
    const values: Record<string, string> = { email: 'bob@example.com', tel: '+33 6 12 34 56 78' }
    const form = { matches: (s: string) => s === '#signup', elements: { namedItem: (name: string) => (name in values ? { value: values[name] } : null) } }
    const page = await browse({ settings: { forms: [{ selector: '#signup', emailField: 'email', phoneField: 'tel' }], banner: 'off' } })
    page.emit('submit', { target: { matches: () => false } })
    page.emit('submit', { target: form })
    await page.tick()
    const all = identifies(page.sent)
    expect(all).toHaveLength(1)
    valid(IdentifyBody, all[0]!.body)
    expect(all[0]).toMatchObject({ beacon: true, body: { email: 'bob@example.com', via: 'form', fields: { phone: '+33 6 12 34 56 78' } } })
  })

  it('keeps working with a cookie when localStorage throws, and never throws into the page', async () => {
    const page = await browse({ settings: { forms: [{ selector: ':::bad', emailField: 'e' }], banner: 'off' }, failStorage: true })
    const [hit] = collects(page.sent)
    expect(page.cookies.get('dc_vid')).toBe(hit!.body.vid)
    expect(page.cookies.get('dc_sid')).toMatch(/^[A-Za-z0-9_-]{22}\.\d+$/)
    expect(() => {
      page.dcutils().track()
      page.dcutils().track({ toString: null })
      page.dcutils().identifyUser(null)
      page.dcutils().consent('maybe')
      page.emit('submit', { target: null })
    }).not.toThrow()
  })
})

describe("banner 'eu'", () => {
  it('sends the first hit without ids or storage; a "not required" answer allows them and resends that view', async () => {
    const page = await browse({ settings: { forms: [], banner: 'eu' } })
    const [anonymous, identified] = collects(page.sent)
    valid(CollectBody, anonymous!.body)
    expect(anonymous!.body).not.toHaveProperty('sid')
    expect(anonymous!.body).not.toHaveProperty('vid')
    expect(anonymous!.body).not.toHaveProperty('clickIds')
    expect(anonymous!.body).not.toHaveProperty('device')
    expect(identified!.body).toMatchObject({ sid: expect.any(String), vid: expect.any(String), clickIds: { gclid: 'G-1' }, hits: anonymous!.body.hits })
    expect(page.storage.get('dc_consent')).toBe('not-required')
    await page.navigate('/next')
    expect(collects(page.sent)[2]!.body.device).toMatchObject({ hash: expect.stringMatching(/^[0-9a-f]{64}$/), version: 1 })
  })

  it('shows the banner when consent is required and stores nothing until the visitor accepts', async () => {
    const answer = { ok: true, consent: { required: true, banner: 'eu' } }
    const page = await browse({ settings: { forms: [], banner: 'eu' }, answer })
    expect(page.banner.mounted).toBe(true)
    expect(page.banner.root!.innerHTML).toMatch(/role="dialog"[\s\S]*value="denied"[\s\S]*value="granted"/)
    expect(page.storage.size + page.cookies.size).toBe(0)
    page.dcutils().identifyUser('ann@example.com')
    expect(identifies(page.sent)).toHaveLength(0)

    page.banner.root!.click.forEach((fn) => fn({ target: { value: 'granted' } }))
    await page.tick()
    expect(page.banner.removed).toBe(true)
    expect(page.storage.get('dc_consent')).toBe('granted')
    const replay = collects(page.sent).at(-1)!
    expect(replay.body).toMatchObject({ consent: 'granted', sid: expect.any(String), clickIds: { gclid: 'G-1' }, hits: collects(page.sent)[0]!.body.hits })
    expect(identifies(page.sent)[0]!.body).toMatchObject({ email: 'ann@example.com', consent: 'granted', vid: replay.body.vid })
  })

  it("speaks the site's words in the visitor's language, escaped, and English when the site gave none", async () => {
    const answer = { ok: true, consent: { required: true, banner: 'eu' } }
    const bannerText = {
      de: { message: 'Diese Seite misst Besuche. Einverstanden?', accept: 'Zustimmen', reject: 'Ablehnen' },
      fr: { message: 'Ce site mesure les visites <b>& les annonces</b>. D\'accord ?', accept: 'Accepter', reject: 'Refuser' },
    }
    const french = await browse({ settings: { forms: [], banner: 'eu', bannerText }, answer }) // the fake browser prefers fr-FR
    expect(french.banner.root!.innerHTML).toContain('<p id="m">Ce site mesure les visites &#60;b&#62;&#38; les annonces&#60;/b&#62;. D&#39;accord ?</p>')
    expect(french.banner.root!.innerHTML).toMatch(/value="denied">Refuser<\/button><button type="button" value="granted">Accepter</)
    const english = await browse({ settings: { forms: [], banner: 'eu' }, answer })
    expect(english.banner.root!.innerHTML).toMatch(/value="denied">Reject<\/button><button type="button" value="granted">Accept</)
  })

  it('a stored refusal skips the banner and keeps ids out', async () => {
    const page = await browse({ settings: { forms: [], banner: 'eu' }, stored: { dc_consent: 'denied' }, cookie: '_uetvid=839d8b10dcb111ee9d98ad5bcaa80a53', answer: { ok: true, consent: { required: true, banner: 'eu' } } })
    expect(page.banner.mounted).toBe(false)
    expect(collects(page.sent)).toHaveLength(1)
    expect(collects(page.sent)[0]!.body).toMatchObject({ consent: 'denied' })
    expect(collects(page.sent)[0]!.body).not.toHaveProperty('vid')
    expect(collects(page.sent)[0]!.body).not.toHaveProperty('clickIds')
    expect(page.storage.has('dc_cids')).toBe(false)
    expect(page.dcutils().sessionId()).toBeUndefined()
  })
})

describe("banner 'always'", () => {
  it("asks at once; a CMP's consent('denied') closes the banner, stores only the choice and wipes ids", async () => {
    const page = await browse({ settings: { forms: [], banner: 'always' }, stored: { dc_vid: 'oldvisitor12345' } })
    expect(page.banner.mounted).toBe(true)
    page.dcutils().consent('denied')
    expect(page.banner.removed).toBe(true)
    expect(Object.fromEntries(page.storage)).toEqual({ dc_consent: 'denied' })
    page.dcutils().track('Lead')
    await page.tick()
    expect(collects(page.sent).every((s) => !('vid' in s.body))).toBe(true)
  })
})

describe('the site\'s own consent tool', () => {
  type TcfListener = (data: unknown, ok: boolean) => void
  const tcData = (consents: Record<number, boolean>) => ({ eventStatus: 'useractioncomplete', gdprApplies: true, tcString: 'TC-STRING', purpose: { consents } })

  it('with a TCF CMP on the page the banner is never loaded; identifiers wait for purpose 1 and follow every change', async () => {
    let listener: TcfListener = () => undefined
    const __tcfapi = (command: string, _version: number, callback: TcfListener) => void (command === 'addEventListener' && (listener = callback))
    const page = await browse({ settings: { forms: [], banner: 'always' }, globals: { __tcfapi } })
    expect(page.loaded).toEqual(['cmp'])
    expect(page.banner.mounted).toBe(false)
    listener(tcData({ 1: false, 3: true, 4: true, 7: true }), true)
    page.dcutils().track('refused')
    await page.tick()
    expect(collects(page.sent).every((s) => s.body.sid === undefined && s.body.vid === undefined)).toBe(true)

    listener(tcData({ 1: true, 3: true, 4: true, 7: true }), true)
    page.dcutils().track('granted')
    await page.tick()
    const last = collects(page.sent).at(-1)!
    expect(last.body).toMatchObject({ sid: expect.any(String), consent: 'granted', cmp: { source: 'tcf', tcString: 'TC-STRING' } })
    // The CMP keeps the record: dcgate stores no choice of its own.
    expect(page.storage.has('dc_consent')).toBe(false)
    expect(page.banner.mounted).toBe(false)
  })

  it('Consent Mode commands pushed before the script count; a denied default is no answer until an update', async () => {
    const dataLayer: unknown[] = [['consent', 'default', { ad_storage: 'denied', analytics_storage: 'denied', ad_user_data: 'denied', ad_personalization: 'denied' }]]
    const page = await browse({ settings: { forms: [], banner: 'off' }, globals: { dataLayer } })
    expect(collects(page.sent).every((s) => s.body.sid === undefined)).toBe(true)
    dataLayer.push(['consent', 'update', { analytics_storage: 'granted', ad_storage: 'granted', ad_user_data: 'denied', ad_personalization: 'granted' }])
    page.dcutils().track('after-update')
    await page.tick()
    expect(collects(page.sent).at(-1)!.body).toMatchObject({
      sid: expect.any(String),
      cmp: { source: 'consent-mode', analytics_storage: 'granted', ad_storage: 'granted', ad_user_data: 'denied', ad_personalization: 'granted' },
    })
  })

  it("consent.source 'manual': no banner and no identifiers until dcutils.consent, which also takes Consent Mode's signals", async () => {
    const page = await browse({ settings: { forms: [], banner: 'always', consentSource: 'manual' } })
    expect(page.loaded).toEqual([])
    expect(page.banner.mounted).toBe(false)
    expect(collects(page.sent).every((s) => s.body.sid === undefined)).toBe(true)
    page.dcutils().consent({ analytics_storage: 'granted', ad_storage: 'granted', ad_user_data: 'granted', ad_personalization: 'denied' })
    page.dcutils().track('after-consent')
    await page.tick()
    expect(collects(page.sent).at(-1)!.body).toMatchObject({ sid: expect.any(String), cmp: { source: 'manual', ad_personalization: 'denied' } })
  })

  it('a TCF CMP that appears after the script is picked up on a later look; Google\'s addtlConsent goes along', async () => {
    let listener: TcfListener = () => undefined
    const page = await browse({ settings: { forms: [], banner: 'off' } })
    expect(page.loaded).toEqual(['ids'])
    page.window.__tcfapi = (command: string, _version: number, callback: TcfListener) => void (command === 'addEventListener' && (listener = callback))
    await page.tick()
    expect(page.loaded).toEqual(['ids', 'cmp'])
    listener({ ...tcData({ 1: true, 3: true, 4: true, 7: true }), addtlConsent: '2~89~dv.2572' }, true)
    page.dcutils().track('granted')
    await page.tick()
    expect(collects(page.sent).at(-1)!.body).toMatchObject({ sid: expect.any(String), cmp: { source: 'tcf', tcString: 'TC-STRING', addtlConsent: '2~89~dv.2572' } })
  })

  it('the look-again is bounded: a tool that appears after it ended is not loaded', async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' } })
    for (let i = 0; i < 4; i++) await page.tick()
    page.window.__tcfapi = () => undefined
    await page.tick()
    expect(page.loaded).toEqual(['ids'])
  })

  it('without a consent tool, a site that asks nobody loads neither the reader nor the banner: only the ids chunk (click ids, fingerprint), as identifiers are allowed', async () => {
    const page = await browse({ settings: { forms: [], banner: 'off' } })
    expect(page.loaded).toEqual(['ids'])
  })

  it('loads the forms chunk only on a site that maps forms, and only once identifiers are allowed', async () => {
    const forms = [{ selector: '#signup', emailField: 'email' }]
    const answer = { ok: true, consent: { required: true, banner: 'eu' } }
    const asked = await browse({ settings: { forms, banner: 'eu' }, answer })
    expect(asked.loaded).toEqual(['banner'])
    asked.banner.root!.click.forEach((fn) => fn({ target: { value: 'granted' } }))
    expect(asked.loaded).toEqual(['banner', 'ids', 'forms'])
    expect((await browse({ settings: { forms: [], banner: 'eu' }, answer })).loaded).toEqual(['banner'])
  })
})

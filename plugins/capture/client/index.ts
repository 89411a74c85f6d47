/**
 * The dcgate tracking script (served by GET /script?cop_key=…, built by plugins/capture/script.ts).
 * What it sends, stores and exposes: README.md beside this file.
 *
 * Tag, with an optional stub so calls made before the script loads are queued (keep the id: the script finds
 * itself by it):
 *
 *   <script>
 *     window.dcutils = window.dcutils || { q: [] };
 *     ['track', 'identifyUser', 'consent'].forEach(function (m) {
 *       dcutils[m] = dcutils[m] || function () { dcutils.q.push([m].concat([].slice.call(arguments))) };
 *     });
 *   </script>
 *   <script id="dcgate-script" async src="https://{cdn_url}/script?cop_key={cop_key}"></script>
 *
 * Nothing here may throw into the host page: every entry point is wrapped and errors are swallowed.
 */
import type { showBanner } from './banner.ts'
import type { KeepClickIds } from './click-id-keeper.ts'
import type { ClickIds } from './click-ids.ts'
import { cmpPresent, type CmpConsent } from './cmp-detect.ts'
import { allowed, initialConsent, needsBanner } from './consent.ts'
import { KEYS, PROTOCOL_VERSION } from './constants.ts'
import type { Device } from './fingerprint.ts'
import type { IdsChunk } from './ids-chunk.ts'
import { pageView, trackedEvent, type CollectInput, type Hit, type Identity, type IdentifyInput, type PageViewHit } from './hits.ts'
import { formatSession, isId, nextSession, parseSession, randomId } from './ids.ts'
import { readSettings, type Settings } from './settings.ts'
import { watchSignals } from './signals.ts'
import { get, remove, set } from './storage.ts'
import { findTag } from './tag.ts'
import { createBatcher, post } from './transport.ts'

const METHODS = ['track', 'identifyUser', 'consent']
const IDENTIFIERS = [KEYS.visitor_, KEYS.session_, KEYS.clickIds_]

function guard<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R | undefined {
  return (...args) => {
    try {
      return fn(...args)
    } catch {
      return undefined
    }
  }
}

function start(): void {
  const w = window as unknown as { dcutils?: { q?: unknown, sessionId?: unknown } }
  const tag = findTag()
  if (!tag || w.dcutils?.sessionId) return // no tag found, or the script already runs on this page
  const settings = readSettings<Settings>()
  const endpoint = (path: string): string => `${tag.base}/${path}?cop_key=${encodeURIComponent(tag.copKey)}`
  /** Cookies go along only once identifiers are allowed, and only to a host of the page's own site (ids chunk). */
  const send = (path: string, body: unknown, unloading?: boolean): Promise<unknown> =>
    post(endpoint(path), body, unloading, ids && permitted() ? ids.credentialsFor(endpoint(path)) : 'omit')
  /** Loads a chunk of the script (GET /script/<name>?cop_key=) and hands what it exports to `ready`. */
  const chunk = (name: string, ready: (exported: any) => void, failed?: () => void): void => {
    const script = document.createElement('script')
    script.src = endpoint(`script/${name}`)
    script.onload = guard(() => ready((window as any)[`__dcgate_${name}`]))
    if (failed) script.onerror = guard(failed)
    try {
      document.head.appendChild(script)
    } catch {
      failed?.()
    }
  }
  const source = settings.consentSource || 'auto'
  // The site's consent tool, when one is followed, is asked on every page; dcgate keeps no choice of its own then.
  const state = initialConsent(settings.banner, get(KEYS.consent_), source == 'auto' ? cmpPresent() : source != 'banner')
  let purposes: CmpConsent | undefined
  const permitted = (): boolean => allowed(state)
  const signals = watchSignals()
  const lang = guard(() => navigator.language)()
  const tz = guard(() => Intl.DateTimeFormat().resolvedOptions().timeZone)()
  const queued = w.dcutils && Array.isArray(w.dcutils.q) ? w.dcutils.q : []
  let clickIds: ClickIds = {}
  let device: Device | undefined
  /** The chunks needed once identifiers are allowed (ids, mapped forms) were asked for. */
  let loadedAllowed = false
  /** From the ids chunk; until it arrived (or failed), the views' query strings and the hits to send with ids wait. */
  let keepIds: KeepClickIds | undefined
  let ids: IdsChunk | undefined
  let idsSettled = false
  const searches: [string, number][] = []
  const held: Hit[] = []
  let closeBanner: (() => void) | undefined
  /** Page views of this page load sent without identifiers; sent again (same hit ids) once consent allows. */
  const anonymousViews: PageViewHit[] = []
  let lastPage = ''
  let lastUrl = ''
  /** identifyUser calls waiting for the visitor's choice or the ids chunk (at most 10; dropped after a refusal). */
  const waitingIdentify: unknown[][] = []

  function session(): string {
    const current = nextSession(parseSession(get(KEYS.session_)), Date.now())
    set(KEYS.session_, formatSession(current))
    return current.id
  }

  function visitor(): string {
    const kept = get(KEYS.visitor_)
    const id = isId(kept) ? kept : randomId()
    set(KEYS.visitor_, id, true)
    return id
  }

  function keepClickIds(): void {
    if (keepIds) clickIds = keepIds(location.search, Date.now(), permitted())
    else if (searches.length < 50) searches.push([location.search, Date.now()])
  }

  /** The ids chunk arrived (or could not be loaded): the waiting views' click ids are kept, the held hits go. */
  function settleIds(loaded?: IdsChunk): void {
    idsSettled = true
    if ((ids = loaded)) {
      keepIds = ids.clickIdKeeper()
      for (const [search, at] of searches.splice(0)) clickIds = keepIds(search, at, permitted())
      keepClickIds()
      ids.fingerprint().then((found) => void (device = found), () => undefined)
    }
    for (const hit of held.splice(0)) queue.push(hit)
    identifyWaiting()
  }

  const queue = createBatcher<Hit>(guard((hits: Hit[], unloading: boolean) => {
    const body: CollectInput = { v: PROTOCOL_VERSION, hits, consent: state.choice || 'unknown', signals: signals(), screen: { w: screen.width, h: screen.height } }
    if (purposes && state.choice) body.cmp = purposes
    if (lang) body.lang = lang.slice(0, 35)
    if (tz) body.tz = tz.slice(0, 64)
    // Global Privacy Control: the visitor opted out of sale and sharing (the header says so too, but not through a worker).
    if ((navigator as { globalPrivacyControl?: unknown }).globalPrivacyControl === true) body.gpc = true
    if (permitted()) {
      // Their click ids come with the ids chunk, asked for when identifiers became allowed (a few ms ago at most).
      if (!idsSettled && !unloading) return void held.push(...hits)
      body.sid = session()
      body.vid = visitor()
      if (Object.keys(clickIds).length) body.clickIds = clickIds
      if (device) body.device = device
    } else {
      for (const hit of hits) if (hit.t === 'pageview' && anonymousViews.length < 20) anonymousViews.push(hit)
    }
    void send('collect', body, unloading).then(guard(answer))
  }))

  /** An 'eu' site learns from the server whether this visitor must be asked. */
  function answer(reply: unknown): void {
    const required = (reply as { consent?: { required?: unknown } } | undefined)?.consent?.required
    if (typeof required !== 'boolean' || state.banner !== 'eu' || state.choice || state.cmp || required === state.required) return
    state.required = required
    if (required) {
      for (const key of [...IDENTIFIERS, KEYS.consent_]) remove(key)
      banner()
    } else {
      set(KEYS.consent_, 'not-required')
      onPermitted()
    }
  }

  function onPermitted(): void {
    keepClickIds()
    if (!loadedAllowed) {
      loadedAllowed = true
      chunk('ids', settleIds, () => settleIds())
      // A form is read only once allowed; a submit before the chunk arrived (a few ms) is not seen.
      if (settings.forms) chunk('forms', (watch: (permitted: () => boolean, send: (found: Identity) => void) => void) => watch(permitted, guard((found: Identity) => sendIdentity(found, 'form'))))
    }
    identifyWaiting()
    for (const view of anonymousViews.splice(0)) queue.push(view)
  }

  /** The built-in banner, a chunk loaded only when a visitor must be asked (GET /script/banner). */
  function banner(): void {
    if (!needsBanner(state) || closeBanner) return
    let close: (() => void) | undefined
    let closed = false
    closeBanner = () => void (closed = true, close && close())
    chunk('banner', (show: typeof showBanner) => void (closed || (close = show(guard(choose)))))
  }

  /**
   * The banner's answer, or `dcutils.consent('granted' | 'denied')`, or `dcutils.consent({ ad_storage,
   * analytics_storage, ad_user_data, ad_personalization })` (Consent Mode's names, each 'granted' or 'denied').
   */
  function choose(choice: unknown): void {
    const given = choice && typeof choice == 'object' ? { ...choice, source: 'manual' } as CmpConsent : undefined
    if (given || choice === 'granted' || choice === 'denied') follow(given ? given.analytics_storage : choice, given)
  }

  /** Applies a consent: measurement decides identifiers; a change of mind applies from the next hit. */
  function follow(choice: unknown, consent?: CmpConsent): void {
    if (consent && consent.source != 'manual' && !state.cmp) {
      // A consent tool answered: it is followed from now on, and dcgate's banner goes.
      state.cmp = true
      remove(KEYS.consent_)
    }
    closeBanner?.()
    closeBanner = undefined
    purposes = consent
    if (choice !== 'granted' && choice !== 'denied') return
    const was = state.choice
    state.choice = choice
    if (choice === 'denied' && was !== 'denied') withdraw()
    if (!state.cmp) set(KEYS.consent_, choice)
    if (choice === 'granted' && was !== 'granted') onPermitted()
  }

  /** Forgets the identifiers; a visit that had them is told once, so the server stops its conversions too. */
  function withdraw(): void {
    const previous = parseSession(get(KEYS.session_))?.id
    for (const key of IDENTIFIERS) remove(key)
    const hit = previous && trackedEvent('dc_consent_withdrawn', undefined, undefined, location.href, Date.now())
    if (hit) void send('collect', { v: PROTOCOL_VERSION, sid: previous, consent: 'denied', hits: [hit] })
  }

  function identifyUser(email: unknown, fields: unknown): void {
    if ((permitted() || !state.choice) && waitingIdentify.length < 10) waitingIdentify.push([email, fields])
    identifyWaiting()
  }

  /** Sends the waiting identifyUser calls once identifiers are allowed, with the ids chunk's cleaning. */
  function identifyWaiting(): void {
    if (!permitted() || !ids) return
    for (const [email, fields] of waitingIdentify.splice(0)) {
      const found = ids.identity(email, fields)
      if (found) sendIdentity(found, 'sdk')
    }
  }

  function sendIdentity(found: Identity, via: 'sdk' | 'form'): void {
    if (!permitted()) return
    const body: IdentifyInput = { v: PROTOCOL_VERSION, sid: session(), vid: visitor(), ...found, via, consent: state.choice || 'unknown' }
    if (device) body.device = device
    // A submitted form usually leaves the page: send it as a beacon.
    void send('identify', body, via === 'form')
  }

  function view(): void {
    const url = location.href
    const page = url.split('#')[0]!
    if (page === lastPage) return
    const ref = lastPage ? lastUrl : document.referrer
    lastPage = page
    lastUrl = url
    keepClickIds()
    queue.push(pageView(url, Date.now(), ref, document.title))
  }

  const api = {
    track: guard((name: unknown, props?: unknown, options?: unknown) => {
      const hit = trackedEvent(name, props, options, location.href, Date.now())
      if (hit) queue.push(hit)
    }),
    identifyUser: guard(identifyUser),
    consent: guard(choose),
    /** The dc_session_id for server-side conversions; undefined until consent allows identifiers. */
    sessionId: guard(() => (permitted() ? session() : undefined)),
    /** Entries pushed after load run at once, like the stub's queue. */
    q: { push: guard((entry: unknown) => run(entry)) },
  }

  function run(entry: unknown): void {
    if (!Array.isArray(entry) || !METHODS.includes(entry[0])) return
    const [method, ...args] = entry as ['track' | 'identifyUser' | 'consent', ...unknown[]]
    ;(api[method] as (...a: unknown[]) => void)(...args)
  }

  w.dcutils = api
  const safeView = guard(view)
  for (const method of ['pushState', 'replaceState'] as const) {
    const original = history[method]
    history[method] = function (this: History, ...args: Parameters<History['pushState']>) {
      const result = original.apply(this, args)
      setTimeout(safeView)
      return result
    }
  }
  addEventListener('popstate', () => setTimeout(safeView))
  addEventListener('pagehide', () => queue.flush(true))
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && queue.flush(true))

  /** The consent tool reader (GET /script/cmp), which then reports to `follow`. */
  const readCmp = (): void => chunk('cmp', (watch) => watch(source, guard(follow)))
  // 'auto' looks again for a consent tool loaded after this script: 250 ms on, doubling, for about a minute.
  let wait = 125
  const look = guard((): unknown => cmpPresent() ? readCmp() : wait < 3e4 && setTimeout(look, wait *= 2))
  if (state.cmp && source != 'manual') readCmp()
  else if (source == 'auto') look()
  view()
  if (permitted()) onPermitted()
  banner()
  for (const entry of queued as unknown[]) guard(run)(entry)
}

guard(start)()

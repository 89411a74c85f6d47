/**
 * Reads the site's own consent tool, without glue code: the IAB TCF API (`__tcfapi`), Google Consent Mode (the
 * `consent` commands in `dataLayer`, pushed before this script or after, directly or through `gtag`), and the IAB GPP
 * API (`__gpp`). A chunk of its own (GET /script/cmp), loaded by the main script only when a tool is followed. Each
 * report is the tool's whole current answer: whether measurement (identifiers) is allowed, and what to pass on; the
 * server reads the purposes from it, decoding TC and GPP strings with the IAB's own libraries (core/consent;
 * docs/privacy.md has the mapping).
 */
import type { CmpConsent } from './cmp-detect.ts'

const w = window as any
const SIGNALS = ['ad_storage', 'analytics_storage', 'ad_user_data', 'ad_personalization'] as const
const is = (entry: any): boolean => entry && entry[0] == 'consent' && (entry[1] == 'default' || entry[1] == 'update') && entry[2] && typeof entry[2] == 'object'
const on = (source: string, tool: string): boolean => source == 'auto' || source == tool

type Signal = 'granted' | 'denied' | undefined
/** `measurement` undefined: the tool waits for the visitor. */
type Report = (measurement: Signal, consent: CmpConsent) => void

const TOOLS = ['gpp', 'consent-mode', 'tcf']

/**
 * Follows the tools `source` allows. Under 'auto' a richer tool, once it answered, wins over a poorer one (TCF, then
 * Consent Mode, then GPP). A tool loaded after this script is looked for again, 250 ms on and doubling, for about a
 * minute.
 */
export function watchCmp(source: string, report: Report): void {
  let best = -1
  const follow = (measurement: Signal, consent: CmpConsent): void => {
    const rank = TOOLS.indexOf(consent.source)
    if (rank >= best) report(measurement, consent), (best = rank)
  }
  const listen = (name: string, subscribe: (call: Function) => void, wait = 125): void => {
    const call = api(name)
    if (call) subscribe(call)
    else if (wait < 3e4) setTimeout(() => listen(name, subscribe, wait * 2), wait * 2)
  }
  // TCF v2: called back now and on every change (tcloaded, cmpuishown, useractioncomplete).
  if (on(source, 'tcf')) listen('__tcfapi', (tcfapi) => tcfapi('addEventListener', 2, (d: any, ok: boolean) => {
    if (!ok || !d) return
    if (d.gdprApplies === false) {
      const consent: CmpConsent = { source: 'tcf' }
      for (const key of SIGNALS) consent[key] = 'granted'
      return follow('granted', consent)
    }
    const granted = d.eventStatus != 'cmpuishown' && d.tcString
    // Google's Additional Consent string rides along (https://support.google.com/admanager/answer/9681920).
    const ac = typeof d.addtlConsent == 'string' && d.addtlConsent ? { addtlConsent: d.addtlConsent } : {}
    follow(granted ? d.purpose.consents[1] ? 'granted' : 'denied' : undefined, granted ? { source: 'tcf', tcString: d.tcString, ...ac } : { source: 'tcf' })
  }))
  // GPP: US sections are opt-out laws, so measurement needs no consent there; the server reads the opt-outs. When the
  // EU's TCF section (id 2) applies, its purpose 1 decides, unless a TCF API is there to be followed instead.
  if (on(source, 'gpp')) listen('__gpp', (gpp) => gpp('addEventListener', (e: any, ok: boolean) => {
    const ping = ok && e && e.pingData
    if (!ping || ping.signalStatus != 'ready') return
    const eu = (ping.applicableSections || []).indexOf(2) >= 0
    if (eu && on(source, 'tcf') && api('__tcfapi')) return
    const section = (ping.parsedSections || {}).tcfeuv2
    // A section of several segments comes as an array, its core first.
    const core = section && (section[0] || section)
    const measurement = !eu ? 'granted' : ping.cmpDisplayStatus == 'visible' ? undefined : core && core.PurposeConsents && core.PurposeConsents[0] ? 'granted' : 'denied'
    follow(measurement, { source: 'gpp', gppString: ping.gppString || undefined })
  }))
  if (on(source, 'consent-mode')) watchConsentMode(follow)
}

/**
 * The API itself, or for a page in a frame, a stand-in that reaches it in the ancestor window holding its locator
 * frame (`__tcfapiLocator`, `__gppLocator`) through postMessage, as the IAB's TCF and GPP specifications describe.
 */
function api(name: string): Function | undefined {
  if (w[name]) return w[name]
  let host: any
  for (let f: any = w; !host && f && f != w.top;) {
    f = f.parent
    try {
      if (f[name + 'Locator']) host = f
    } catch {}
  }
  if (!host) return undefined
  const calls: any = {}
  addEventListener('message', (event) => {
    let data = event.data
    try {
      data = typeof data == 'string' ? JSON.parse(data) : data
    } catch {}
    const back = data && data[name + 'Return']
    if (back && calls[back.callId]) calls[back.callId](back.returnValue, back.success)
  })
  // TCF: (command, version, callback, parameter); GPP: (command, callback, parameter, version).
  return (command: string, a: any, b: any, c: any) => {
    const callId = Math.random() + ''
    const tcf = name == '__tcfapi'
    calls[callId] = tcf ? b : a
    host.postMessage({ [name + 'Call']: { command, callId, version: tcf ? a : c, parameter: tcf ? c : b } }, '*')
  }
}

/**
 * `gtag('consent', 'default' | 'update', {...})` pushes its `arguments` into dataLayer; later ones update earlier
 * ones. A denied default is no answer yet (the tool updates it once the visitor chose, or from their stored choice).
 */
function watchConsentMode(report: Report): void {
  const layer = (w.dataLayer = w.dataLayer || [])
  const consent: CmpConsent = { source: 'consent-mode' }
  let updated = false
  const read = (entry: any): void => {
    if (!is(entry)) return
    updated = updated || entry[1] == 'update'
    for (const key of SIGNALS) if (entry[2][key] == 'granted' || entry[2][key] == 'denied') consent[key] = entry[2][key]
    const analytics = consent.analytics_storage
    report(updated || analytics == 'granted' ? analytics : undefined, { ...consent })
  }
  layer.forEach(read)
  const push = layer.push
  layer.push = function (...entries: unknown[]) {
    try {
      entries.forEach(read)
    } catch {}
    return push.apply(layer, entries)
  }
}

// The main script calls this once the chunk has loaded.
w.__dcgate_cmp = watchCmp

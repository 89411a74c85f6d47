import { hash, randomUUID } from 'node:crypto'
import type { ConsentPurposes } from '../../core/consent/purposes.ts'
import type { CollectBody } from './protocol.ts'
import type { CaptureBatch, PageEventRow, VisitRow } from './store/rows.ts'
import type { VisitInfo } from './intel/types.ts'

export interface HitContext {
  siteId: string
  receivedAt: Date
  ip?: string
  userAgent?: string
  verdict: VisitInfo
  /** False while consent is required and not given: nothing that identifies the visitor is kept. */
  personal: boolean
  /** The request carried Global Privacy Control (request.ts, globalPrivacyControl). */
  gpc?: boolean
  /** The page's consent per purpose (read from the body's `cmp`); kept only with identifiers. */
  purposes?: ConsentPurposes
}

/** A browser clock ahead of ours, or more than a day behind, is not believed. */
const MAX_LAG_MS = 86_400_000

/** The request as rows: its page events, and the visit it belongs to (when the visitor may be identified). */
export function toBatch(body: CollectBody, ctx: HitContext): CaptureBatch {
  const received = ctx.receivedAt.getTime()
  const sessionId = ctx.personal ? body.sid ?? null : null
  let first = Infinity
  let last = -Infinity
  const events: PageEventRow[] = body.hits.map((hit) => {
    const at = hit.ts > received || hit.ts < received - MAX_LAG_MS ? received : hit.ts
    if (at < first) first = at
    if (at > last) last = at
    return {
      id: hitId(ctx.siteId, hit, received),
      site_id: ctx.siteId,
      session_id: sessionId,
      kind: hit.t,
      name: hit.t === 'event' ? hit.name : null,
      url: ctx.personal ? hit.url : withoutClickIds(hit.url),
      referrer: hit.t === 'pageview' && hit.ref ? (ctx.personal ? hit.ref : withoutClickIds(hit.ref)) : null,
      title: hit.t === 'pageview' ? hit.title ?? null : null,
      props: hit.t === 'event' ? hit.props ?? null : null,
      occurred_at: at,
      received_at: received,
    }
  })
  if (!sessionId) return { events }
  const firstPage = body.hits.find((hit) => hit.t === 'pageview')
  const v = ctx.verdict
  const visit: VisitRow = {
    site_id: ctx.siteId,
    session_id: sessionId,
    visitor_id: body.vid ?? null,
    started_at: first,
    ended_at: last,
    ip_address: ctx.ip ?? null,
    user_agent: ctx.userAgent ?? null,
    country: v.country ?? null,
    city: v.city ?? null,
    isp: v.isp ?? null,
    organization: v.organization ?? null,
    asn: v.asn ?? null,
    is_vpn: v.isVpn,
    is_proxy: v.isProxy,
    is_tor: v.isTor,
    is_hosting: v.isHosting,
    platform: v.platform ?? null,
    browser: v.browser ?? null,
    os: v.os ?? null,
    is_bot: v.isBot,
    bot_reasons: v.botReasons,
    referrer: firstPage?.t === 'pageview' ? firstPage.ref ?? null : null,
    landing_url: firstPage?.url ?? null,
    click_ids: body.clickIds ?? {},
    consent: body.consent,
    device_hash: body.device?.hash ?? null,
    gpc: ctx.gpc === true,
    consent_purposes: ctx.personal ? ctx.purposes ?? null : null,
  }
  return { events, visit }
}

/** The largest time the 48-bit timestamp of a UUIDv7 holds. */
const MAX_UUID7_MS = 2 ** 48 - 1

/**
 * A page event's id, shaped as a UUIDv7: a time in the first 48 bits keeps page_events' primary key appending at
 * its right edge, where random ids touched a random leaf page (and wrote it to the WAL) for every hit. A hit the
 * script named gets its client time and a hash of site and `hid`, so the same hit sent again (after consent, or
 * retried) maps to the same row; other hits get the server's time and random bits.
 */
function hitId(siteId: string, hit: { hid?: string, ts: number }, receivedMs: number): string {
  const time = (hit.hid ? Math.min(hit.ts, MAX_UUID7_MS) : receivedMs).toString(16).padStart(12, '0')
  if (!hit.hid) {
    const random = randomUUID() // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: its last 62 random bits become ours
    return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`
  }
  const bits = hash('sha256', `${siteId}:${hit.hid}`, 'hex')
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${bits.slice(13, 16)}-8${bits.slice(17, 20)}-${bits.slice(20, 32)}`
}

const CLICK_ID_PARAM = /([?&])(gclid|gbraid|wbraid|fbclid|ttclid|li_fat_id|msclkid|rdt_cid|epik|twclid|ScCid|_gl)=[^&#]*/g

/** A URL kept without consent loses its click ids: they identify the ad click, so the person. */
export function withoutClickIds(url: string): string {
  return url.replace(CLICK_ID_PARAM, '$1').replace(/([?&])&+/g, '$1').replace(/[?&]+(#|$)/, '$1')
}

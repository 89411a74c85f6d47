/**
 * The wire protocol between the tracking script (plugins/capture/client) and the capture routes. Both sides
 * import these schemas: the client for its types, the server to validate. Bumping `v` means a new protocol;
 * the server keeps accepting the old one for as long as cached scripts may send it (the script is cached a day).
 *
 * Every route takes the site's public cop_key in the query string (`?cop_key=`), and a body that is JSON, sent
 * as application/json by fetch or as text/plain by navigator.sendBeacon (which cannot set the type).
 */
import * as v from 'valibot'
import { ClientConsent } from '../../core/consent/fields.ts'
import { MailboxSchema } from '../../core/identity/email.ts'

export const PROTOCOL_VERSION = 1

/** The fixed id of the script tag; the script finds its own tag by it. Documented and kept (spec). */
export const SCRIPT_TAG_ID = 'dcgate-script'

/** Click ids the script keeps from the landing URL (and the _fbp cookie), first-party, per visitor. */
export const CLICK_ID_KEYS = ['gclid', 'gbraid', 'wbraid', 'fbc', 'fbp', 'ttclid', 'li_fat_id', 'msclkid', 'uetvid', 'ga', 'ga_session', 'rdt_cid', 'epik', 'twclid', 'ScCid', 'scid'] as const

const Id = v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 URL-safe characters'))
const Url = v.pipe(v.string(), v.maxLength(4096))
const Time = v.pipe(v.number(), v.integer(), v.minValue(0))
const PropValue = v.union([v.pipe(v.string(), v.maxLength(1000)), v.number(), v.boolean(), v.null()])

/** Properties a conversion takes into a column (plugins/capture/pixel.ts), at most as long as the column holds. */
export const PROP_COLUMN_LENGTHS: Readonly<Record<string, number>> = { order_id: 255, content_name: 500, content_category: 255 }

const PropsFitColumns = v.rawCheck<Record<string, string | number | boolean | null>>(({ dataset, addIssue }) => {
  if (!dataset.typed) return
  for (const [key, max] of Object.entries(PROP_COLUMN_LENGTHS)) {
    const value = dataset.value[key]
    if (typeof value === 'string' && value.length > max) {
      addIssue({ message: `Invalid length: Expected <=${max}`, path: [{ type: 'object', origin: 'value', input: dataset.value, key, value }] })
    }
  }
})

/**
 * The hit's own id, made by the script. A page view first sent without identifiers (consent pending) and sent again
 * with them once given carries the same id: the server links the stored hit to the visit instead of counting it twice.
 */
const HitId = v.optional(Id)

export const PageView = v.object({
  t: v.literal('pageview'),
  hid: HitId,
  /** Client time, ms since epoch; the server also stamps its own. */
  ts: Time,
  url: Url,
  /** document.referrer on the first page view, the previous URL on SPA navigation. */
  ref: v.optional(Url),
  title: v.optional(v.pipe(v.string(), v.maxLength(500))),
})

export const TrackedEvent = v.object({
  t: v.literal('event'),
  hid: HitId,
  ts: Time,
  url: Url,
  /** `dcutils.track(name, props)`; a standard event or a site event key is a pixel conversion. */
  name: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
  props: v.optional(v.pipe(v.record(v.pipe(v.string(), v.maxLength(100)), PropValue), v.check((p) => Object.keys(p).length <= 50, 'at most 50 properties'), PropsFitColumns)),
  /** The integrator's id for the event; becomes the conversion's messageId (dedupe with the server-side send). */
  id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
})

export const Hit = v.variant('t', [PageView, TrackedEvent])
export type Hit = v.InferOutput<typeof Hit>

/** What the browser tells about itself that a bot would get wrong. All optional: old browsers send less. */
export const BotSignals = v.object({
  /** navigator.webdriver */
  webdriver: v.optional(v.boolean()),
  /** Hints of a headless browser: e.g. 'HeadlessChrome-ua', 'no-plugins', 'no-languages', 'zero-outer-size'. */
  headless: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(20))),
  /** Pointer, key, scroll and touch events seen before this hit was sent. */
  interactions: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  /** ms from navigation start to the first interaction; absent if none yet. */
  firstInteractionMs: v.optional(Time),
  /** ms from navigation start to this hit. */
  sinceLoadMs: v.optional(Time),
})
export type BotSignals = v.InferOutput<typeof BotSignals>

/** A device fingerprint computed in the browser from local properties only (no network, no third party). */
export const Device = v.object({
  /** SHA-256 hex of the collected properties. */
  hash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'must be 64 hex characters')),
  /** First 12 characters of the hash, for display. */
  short: v.pipe(v.string(), v.regex(/^[0-9a-f]{12}$/)),
  /** 0–1: how many of the properties could be read. */
  confidence: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  /** Version of the fingerprint recipe; hashes of different versions are not comparable. */
  version: v.pipe(v.number(), v.integer(), v.minValue(1)),
})

export const Consent = v.picklist(['granted', 'denied', 'unknown'])

/** POST /collect?cop_key=… */
export const CollectBody = v.object({
  v: v.literal(PROTOCOL_VERSION),
  /**
   * The visit: dc_session_id, made by the script, kept first-party, renewed after 30 minutes without a hit.
   * Absent while consent is required and not given: the hit is then counted without any identifier.
   */
  sid: v.optional(Id),
  /** The visitor: long-lived first-party id. Absent under the same condition. */
  vid: v.optional(Id),
  hits: v.pipe(v.array(Hit), v.minLength(1), v.maxLength(50)),
  /** Click ids kept for this visitor; sent only with consent (or where none is required). */
  clickIds: v.optional(v.pipe(
    v.record(v.string(), v.pipe(v.string(), v.maxLength(500))),
    v.check((ids) => Object.keys(ids).every((key) => (CLICK_ID_KEYS as readonly string[]).includes(key)), `keys must be among ${CLICK_ID_KEYS.join(', ')}`),
  )),
  consent: v.optional(Consent, 'unknown'),
  signals: v.optional(BotSignals),
  device: v.optional(Device),
  screen: v.optional(v.object({ w: v.pipe(v.number(), v.integer(), v.minValue(0)), h: v.pipe(v.number(), v.integer(), v.minValue(0)) })),
  lang: v.optional(v.pipe(v.string(), v.maxLength(35))),
  tz: v.optional(v.pipe(v.string(), v.maxLength(64))),
  /**
   * navigator.globalPrivacyControl was true: the visitor opted out of the sale or sharing of their data. The browser
   * also sends `Sec-GPC: 1`; this carries it through a server-side worker. Sent only when true.
   */
  gpc: v.optional(v.boolean()),
  /** The page's consent tool as the script read it (TCF, Consent Mode, GPP) or dcgate's banner; core/consent/read.ts. */
  cmp: v.optional(ClientConsent),
})
export type CollectBody = v.InferOutput<typeof CollectBody>

/** The answer to /collect: whether this visitor must be asked for consent (EU/EEA/UK by IP, or the site's setting). */
export const CollectAnswer = v.object({
  ok: v.literal(true),
  consent: v.object({ required: v.boolean(), banner: v.picklist(['eu', 'always', 'off']) }),
})
export type CollectAnswer = v.InferOutput<typeof CollectAnswer>

/** POST /identify?cop_key=… — dcutils.identifyUser(email), or a mapped form submitted (only after consent). */
export const IdentifyBody = v.object({
  v: v.literal(PROTOCOL_VERSION),
  sid: Id,
  vid: Id,
  /** One mailbox, strictly (core/identity/email.ts); the output is its canonical form. */
  email: MailboxSchema,
  /** Where the email came from. */
  via: v.picklist(['sdk', 'form']),
  /** More fields a mapped form carried. */
  fields: v.optional(v.object({
    phone: v.optional(v.pipe(v.string(), v.maxLength(64))),
    first_name: v.optional(v.pipe(v.string(), v.maxLength(255))),
    last_name: v.optional(v.pipe(v.string(), v.maxLength(255))),
  })),
  device: v.optional(Device),
  consent: v.optional(Consent, 'unknown'),
})
export type IdentifyBody = v.InferOutput<typeof IdentifyBody>

/** What a server-side worker adds to a body it forwards: the visitor's own address and user agent. */
const ForwardedVisitor = {
  // 45: the longest address written out; an IPv6 zone (fe80::1%eth0) may be any length and fits no column.
  ip: v.pipe(v.string(), v.maxLength(45, 'must be an IPv4 or IPv6 address'), v.ip('must be an IPv4 or IPv6 address')),
  userAgent: v.pipe(v.string(), v.maxLength(2048)),
}

/** POST /collect/worker?cop_key=… — a /collect body forwarded by a server-side worker, with the visitor's own IP and UA. */
export const WorkerCollectBody = v.object({ ...CollectBody.entries, ...ForwardedVisitor })
export type WorkerCollectBody = v.InferOutput<typeof WorkerCollectBody>

/** POST /identify/worker?cop_key=… — an /identify body forwarded by a server-side worker, with the visitor's own IP and UA. */
export const WorkerIdentifyBody = v.object({ ...IdentifyBody.entries, ...ForwardedVisitor })

/** Header carrying the site's `capture.workerSecret` on /collect/worker and /identify/worker. */
export const WORKER_SECRET_HEADER = 'x-dc-worker-secret'

/** The banner's words in one language (the site's `consent.text`). */
export interface BannerText {
  message: string
  accept: string
  reject: string
}

/** What the script learns from its own tag and the server, passed into the bundle at serve time. */
export interface ClientSettings {
  /** Origin the script was loaded from; every request goes there. */
  host: string
  copKey: string
  /** Forms whose submit identifies the visitor (only after consent). */
  forms: { selector: string, emailField: string, phoneField?: string, firstNameField?: string, lastNameField?: string }[]
  banner: 'eu' | 'always' | 'off'
  /** The banner's words by language tag ('de', 'fr-CA'); absent: the built-in English. */
  bannerText?: Record<string, BannerText>
  /** Whose consent the script follows (the site's `consent.source`); absent: 'auto'. */
  consentSource?: 'auto' | 'tcf' | 'consent-mode' | 'gpp' | 'banner' | 'manual'
}

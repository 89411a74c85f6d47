import * as v from 'valibot'
import type { ResolvedConfig, SiteConfig } from './config/schema.ts'
import { formatIssues } from './config/issues.ts'
import { BootError } from './errors.ts'
import type { AdjustmentEvent, ClearTraitName, Confirmation, ConversionEvent, ConversionInput, DeliveryOutcome, Diagnosis, PlatformRequest, PlatformResponse } from './delivery/types.ts'

type OptionsSchema<O> = v.GenericSchema<unknown, O>

/** What an adapter may do before its requests: fetch or refresh an access token. */
export interface AuthContext {
  fetch: typeof fetch
  /** Caches across requests (and instances with Redis); keep tokens here, keyed by the options they came from. */
  cache: { get: (key: string) => Promise<string | null>, set: (key: string, value: string, ttlSeconds: number) => Promise<void> }
  signal: AbortSignal
  /**
   * Where a refresh token the vendor issued in place of the configured one is kept (rotation), durably and shared by
   * every instance. Absent where nothing is kept (a bare call in a test or tool): use the configured token.
   */
  credentials?: CredentialStore
}

/**
 * The day the vendor says the pinned API version stops working, from its version.ts. dcgate warns (start-up log,
 * /readyz) from SUNSET_WARNING_DAYS before it for every site that uses the adapter (core/api-sunsets.ts).
 */
export interface ApiSunset {
  /** The pinned version the date is for: a new pin without a new date must not inherit the old one. */
  version: string
  /** First day the version may fail, YYYY-MM-DD (UTC). */
  date: string
  /** The vendor page that publishes the date. */
  source: string
}

/** An ad platform: pure mapping to the platform's request and back, so one contract suite checks all. */
export interface AdPlatformDefinition<O = unknown> {
  kind: 'ad-platform'
  /** Stable name; also the key under `sites[].destinations`. */
  name: string
  /** The platform as people call it ("Meta", "Google Ads"), for the delivery report; default `name`. */
  label?: string
  /** The vendor API version this adapter speaks, pinned in its version.ts. */
  apiVersion: string
  /** When the vendor retires that version, where it has published a date (version.ts). */
  apiSunset?: ApiSunset
  /** Must accept a `baseUrl` (contract): a proxy or a fake server can stand in for the platform. */
  options: OptionsSchema<O>
  /** Most events one request may carry (the vendor's documented limit); the worker and the inline grouping batch up to it. */
  maxBatchSize: number
  /**
   * Requests per second dcgate may send this platform for one account (the vendor's documented limit, or a safe share
   * of it); the delivery budget is shared across instances when Redis is configured. Unset: no limit of our own.
   */
  maxRequestsPerSecond?: number
  /** Oldest event the platform accepts, in days. Unset when the vendor documents no limit: no age skip, retries bounded by attempts only. */
  maxEventAgeDays?: number
  /**
   * Personal fields the platform takes unhashed (`event.clear`), as its documentation asks: dcgate stores those of a
   * conversion only while a delivery may need them (core/delivery/clear-fields.ts). Absent: none.
   */
  clearTraits?: readonly ClearTraitName[]
  /** Extra headers for this call, e.g. an OAuth access token; the only place an adapter does I/O. */
  authorize?: (options: O, ctx: AuthContext) => Promise<Record<string, string>>
  /**
   * Run once per configured destination when the app is ready, without holding the start: what the credentials lack
   * for what the options ask (Google: a refresh token without the scope its API needs), each problem naming what is
   * missing. Logged as warnings (core/delivery/startup-checks.ts); deliveries go on and fail with the vendor's words.
   */
  startupCheck?: (options: O, ctx: AuthContext) => Promise<string[]>
  /** Pure: why this platform cannot take the event at all (e.g. no conversion action for it); it is then recorded as skipped, not sent. */
  skipReason?: (event: ConversionEvent, options: O) => string | undefined
  /**
   * Pure: which request the event must go in, when one platform account takes several kinds that may not share a
   * request (TikTok: one `event_source` per request). Undefined: the account's usual request. Events of different
   * groups are batched apart, so `toRequest` only ever gets events of one group; they share the account's budget.
   */
  requestGroup?: (event: ConversionEvent, options: O) => string | undefined
  /** Pure: the events (at most maxBatchSize) as one platform request, personal data already hashed. */
  toRequest: (events: readonly ConversionEvent[], options: O) => PlatformRequest
  /** Pure: one outcome per event, in order; classifies success, partial failure, auth, rate limit, server error. */
  parseResponse: (response: PlatformResponse, events: readonly ConversionEvent[]) => DeliveryOutcome[]
  /**
   * How the platform takes refunds of conversions it received (core/delivery/adjust.ts). Absent when its current API
   * documents none: a refund is then recorded skipped, "not supported by <label>".
   */
  adjustments?: AdjustmentSupport<O>
  /** Without `adjustments`: why, when it is more than "the API documents no refund" (another API would take them). */
  adjustmentsGap?: string
  /**
   * How the platform's delayed verdict on a request it already took is read back (Google's requestStatus:retrieve):
   * the delivery report shows it, and a delayed rejection turns the delivery `failed` (core/delivery/diagnostics.ts).
   */
  diagnostics?: DiagnosticsSupport<O>
  /** A documented call that reads the account and changes nothing: the dashboard's "Test connection" (README). */
  connectionTest?: ConnectionTest<O>
  /** Without `connectionTest`: why the vendor offers no such call with these credentials, shown beside the button. */
  connectionTestGap?: string
  /**
   * How a sample conversion goes in the platform's test mode, for the dashboard's "Send test event": the options that
   * turn the test mode on. Absent: the platform documents no test mode, and nothing is sent (`testEventsGap` says why).
   */
  testEvents?: TestEventSupport<O>
  /** Without `testEvents`: the platform's own words on why there is no test mode, shown beside the button. */
  testEventsGap?: string
  /**
   * How a held lead released after `maxEventAgeDays` is sent, in the report's words (Meta: "as a CRM-qualified lead
   * (action_source system_generated)"). Absent: with the qualification time as event time, which every platform takes.
   */
  lateLeadRule?: string
}

/** What a connection test found: `ok` with what the vendor named (the pixel, the account), or its error. */
export interface ConnectionVerdict {
  ok: boolean
  message: string
}

export interface ConnectionTest<O> {
  /** Pure: the harmless call; `auth` is what `authorize` returned (a vendor may want the token in the URL). */
  toRequest: (options: O, auth: Record<string, string>) => PlatformRequest
  /** Pure: the vendor's verdict in its own words. Absent: any 2xx is ok, else the error message of the body. */
  parseResponse?: (response: PlatformResponse, options: O) => ConnectionVerdict
}

export interface TestEventSupport<O> {
  /** What the test mode needs from the person testing (Meta, TikTok: the code Events Manager shows); absent: nothing. */
  codeLabel?: string
  /** Pure: the options with the test mode on, or why it cannot be (no code given). */
  options: (options: O, code: string | undefined) => O | { refused: string }
}

/** A platform's refund upload: its own endpoint, limits and mapping, sent through the same outbox as conversions. */
export interface AdjustmentSupport<O> {
  maxBatchSize: number
  maxRequestsPerSecond?: number
  /** Oldest conversion the platform still adjusts, in days (Google: 54). */
  maxConversionAgeDays: number
  /** Headers for the adjustment call, when they differ from the conversions' (another API, another scope). */
  authorize?: (options: O, ctx: AuthContext) => Promise<Record<string, string>>
  /** Pure: why this refund cannot be told (e.g. the conversion's event has no conversion action). */
  skipReason?: (item: AdjustmentEvent, options: O) => string | undefined
  /** Pure: the refunds (at most maxBatchSize) as one platform request. */
  toRequest: (items: readonly AdjustmentEvent[], options: O) => PlatformRequest
  /** Pure: one outcome per refund, in order. */
  parseResponse: (response: PlatformResponse, items: readonly AdjustmentEvent[]) => DeliveryOutcome[]
}

/**
 * A platform that processes requests after answering them, and tells later how it went. Looks are spaced by the time
 * since the request (so they back off exponentially), from `firstCheckAfterMs` until a final answer or `giveUpAfterMs`.
 */
export interface DiagnosticsSupport<O> {
  firstCheckAfterMs: number
  giveUpAfterMs: number
  /** Pure: the platform's id of a request it took, from its 2xx answer (conversions or refunds); undefined when none. */
  receiptOf: (response: PlatformResponse) => string | undefined
  /** Headers for the status call; default the platform's `authorize`. */
  authorize?: (options: O, ctx: AuthContext) => Promise<Record<string, string>>
  /** Pure: the call that reads the status of the request with this id. */
  toRequest: (receipt: string, options: O) => PlatformRequest
  /** Pure: one diagnosis per event of that request (each event as it was sent), in order. */
  parseResponse: (response: PlatformResponse, events: readonly ConversionEvent[], options: O) => Diagnosis[]
}

/**
 * Where an adapter keeps a credential the vendor issued in place of a configured one: Salesforce answers every refresh
 * with a new refresh token and invalidates the one sent; the Microsoft identity platform answers a new one too, and
 * the configured one ages out. Backed by the database (a CRM poller's crm_poll_state row, an ad platform's
 * platform_credentials row), so the newest token survives restarts and every instance reads the same one.
 *
 * `basis` names the configured credential the stored one descends from (a hash, never the secret: `tokenCacheKey`).
 * A stored value is only returned for the same basis, so an operator who pastes a new credential starts from it.
 */
export interface CredentialStore {
  /** The newest credential issued for this basis, or null when none was stored (or it descends from another). */
  get: (basis: string) => Promise<string | null>
  /** Keeps `value` as the newest credential for this basis, replacing any other. */
  set: (basis: string, value: string) => Promise<void>
}

/** A CRM poller's credential store (the poller's crm_poll_state row). */
export type CrmCredentialStore = CredentialStore

/** What the release scheduler hands a CRM poller: fetch, a cache for OAuth sessions, the abort signal, and its clock. */
export interface CrmPollContext extends AuthContext {
  /** Places the first look-back window (no cursor yet). */
  now: () => Date
  /** Set by the scheduler; absent in a bare poll (tests, tools), where an issued credential is not kept. */
  credentials?: CrmCredentialStore
}

/** A lead the CRM now calls qualified: its normalised email and the site's when-qualified event key to release. */
export interface QualifiedLead {
  email: string
  eventName: string
}

export interface CrmPollResult {
  qualified: QualifiedLead[]
  /** Opaque to the scheduler: stored once the releases are done, and passed to the next poll. */
  cursor?: string
}

/** A CRM poller: asks a CRM which held leads became qualified since the cursor. */
export interface CrmPollerDefinition<O = unknown> {
  kind: 'crm-poller'
  /** Stable name; also the key under `sites[].crm`. */
  name: string
  apiVersion: string
  /** When the vendor retires that version, where it has published a date (version.ts). */
  apiSunset?: ApiSunset
  options: OptionsSchema<O>
  intervalSeconds: number
  poll: (options: O, cursor: string | undefined, ctx: CrmPollContext) => Promise<CrmPollResult>
}

/** One conversion a webhook produced. The messageId is derived from the platform's own ids (order id), so a retried or repeated webhook dedupes. */
export interface SourceConversion extends ConversionInput {
  messageId: string
  /** The body's own claim (a signed automation body may say `crm_qualified`); honoured only when the body was verified. */
  confirmation?: Confirmation
  /**
   * Seconds its delivery waits, stored, for a later webhook of the same source to withdraw it (`SourceWithdrawal`):
   * a Stripe PaymentIntent may turn out to pay a subscription's invoice. The worker sends it once the wait is over.
   */
  awaitsWithdrawalSeconds?: number
}

/**
 * A webhook's word that the conversion a waiting event stored (`awaitsWithdrawalSeconds`) under this messageId is not
 * one, or is replaced by one this body brings. The waiting copy is removed unless a delivery of it was attempted; one
 * that arrives later is removed as soon as it is stored. Honoured only from a verified body.
 */
export interface SourceWithdrawal {
  messageId: string
  /** The webhook event types whose copy is withdrawn (`sourceEventType`): a copy another event stored stays. */
  eventTypes: readonly string[]
  /** Why, in the vendor's terms; the answer of the withdrawn conversion's webhook gives it. */
  reason: string
}

/**
 * A refund or cancellation a webhook reports. It is not a conversion: the route marks the conversions stored under
 * `orderId` (core/delivery/queries/refunds.ts). `refundId` is the vendor's id of the refund, so a retry counts once.
 */
export interface SourceRefund {
  /** The order id the purchase was stored under (`orderId` of the conversion). */
  orderId: string
  /** The vendor's id of the refund (Shopify refund id, Stripe re_…, `cancel` for a cancellation): a retry counts once. */
  refundId: string
  /**
   * The purchase's messageId, when the vendor's refund names the payment rather than the shop's order (a Stripe
   * refund names its PaymentIntent): conversions with this messageId are marked too, whatever order id they carry.
   */
  messageId?: string
  /** What this refund returned, in `currency`; absent for a cancellation or a full refund (the whole value). */
  amount?: number
  /** An amount in another currency than the conversion's is not added (it cannot be compared); the refund is dated. */
  currency?: string
  /** When the refund was made (the vendor's time); the conversion keeps the first one as `refunded_at`. */
  at: Date
}

/**
 * What a webhook delivery turns into: conversions to store, a refund to record, or a reason it carries neither
 * (answered 200, nothing stored).
 */
export type SourceParseResult =
  | {
    kind: 'conversions', conversions: SourceConversion[], sourceEventType: string
    /** Refunds and cancellations the same body reports (a WooCommerce order lists its refunds): recorded after the conversions. */
    refunds?: SourceRefund[]
    /** Conversions stored waiting that this body withdraws: applied before its conversions are stored. */
    withdrawals?: SourceWithdrawal[]
  }
  | { kind: 'refund', refund: SourceRefund, sourceEventType: string }
  | { kind: 'ignored', reason: string }

/** A webhook body the source cannot read (not JSON, fields missing): the route answers 422 with this message. */
export class SourceInputError extends Error {
  readonly problems: string[]
  constructor(message: string, problems: string[] = [message]) {
    super(message)
    this.name = 'SourceInputError'
    this.problems = problems
  }
}

/** A conversion input: one webhook format turned into conversions for POST /api/v1/conversions/:source/:api_key. */
export interface IntakeSourceDefinition<O = unknown> {
  kind: 'intake-source'
  /** Stable name; the `:source` path segment and the key under `sites[].sources`. */
  name: string
  options: OptionsSchema<O>
  /**
   * `required`: an unsigned or wrongly signed body answers 401 and stores nothing (payment webhooks).
   * `optional`: an unsigned body is accepted but only as `tracked`; a signature that is present and wrong still answers 401.
   */
  signature: 'required' | 'optional'
  /** What a verified body proves: a payment webhook's conversions are `payment_confirmed`. Unverified ones are `tracked`. */
  confirmation: Confirmation
  /** Whether the request carries a signature at all (only consulted for `optional`). */
  isSigned: (headers: Headers) => boolean
  /** Checks the signature over the raw bytes, constant-time; `now` for timestamp tolerances (Stripe's 300 s). */
  verify: (raw: Uint8Array, headers: Headers, options: O, now: Date) => boolean
  /** Pure: the body as conversions; throws SourceInputError for a body it cannot read. */
  parse: (raw: Uint8Array, headers: Headers, options: O) => SourceParseResult
}

export type AnyDefinition = AdPlatformDefinition<any> | CrmPollerDefinition<any> | IntakeSourceDefinition<any>
type Kind = AnyDefinition['kind']

export function defineAdPlatform<O>(definition: Omit<AdPlatformDefinition<O>, 'kind'>): AdPlatformDefinition<O> {
  return { kind: 'ad-platform', ...definition }
}
export function defineCrmPoller<O>(definition: Omit<CrmPollerDefinition<O>, 'kind'>): CrmPollerDefinition<O> {
  return { kind: 'crm-poller', ...definition }
}
export function defineIntakeSource<O>(definition: Omit<IntakeSourceDefinition<O>, 'kind'>): IntakeSourceDefinition<O> {
  return { kind: 'intake-source', ...definition }
}

/** The config section each kind is configured under, per site. */
const SECTION = { 'ad-platform': 'destinations', 'crm-poller': 'crm', 'intake-source': 'sources' } as const satisfies Record<Kind, string>

type ByKind<K extends Kind> = Extract<AnyDefinition, { kind: K }>

/** A definition with one site's validated options. */
export interface Configured<K extends Kind> {
  definition: ByKind<K>
  options: unknown
}

export interface Registry {
  get: <K extends Kind>(kind: K, name: string) => ByKind<K> | undefined
  list: <K extends Kind>(kind: K) => ByKind<K>[]
  /** The definitions a site has configured, with the site's validated options, in config order (one list, kept until the site changes). */
  forSite: <K extends Kind>(siteId: string, kind: K) => readonly Configured<K>[]
  /** What is wrong with a site's adapter options, each problem named by its path under `prefix` (`sites[0]`). */
  checkSite: (site: SiteConfig, prefix: string) => string[]
  /**
   * Sets the options of these sites (made or changed in the dashboard, core/sites/managed.ts), replacing those they had;
   * every other site keeps its own. Sites in `forget` lose theirs. Throws a BootError when an option is invalid.
   */
  configureSites: (sites: readonly SiteConfig[], forget?: readonly string[]) => void
}

const NONE_CONFIGURED: readonly Configured<Kind>[] = Object.freeze([])

/**
 * Builds the registry from explicit definition lists and validates every site's options against
 * each definition's schema; all problems are reported at once with their config paths.
 */
export function createRegistry(definitions: readonly AnyDefinition[], sites: ResolvedConfig['sites']): Registry {
  const byKey = new Map<string, AnyDefinition>()
  for (const definition of definitions) {
    const key = `${definition.kind}:${definition.name}`
    if (byKey.has(key)) throw new BootError(`Two ${definition.kind} definitions are named "${definition.name}"`)
    byKey.set(key, definition)
  }

  const configure = (site: SiteConfig, prefix: string) => {
    const problems: string[] = []
    const configured: Configured<Kind>[] = []
    for (const [kind, section] of Object.entries(SECTION) as [Kind, typeof SECTION[Kind]][]) {
      for (const [name, raw] of Object.entries(site[section])) {
        const path = prefix ? `${prefix}.${section}.${name}` : `${section}.${name}`
        const definition = byKey.get(`${kind}:${name}`)
        if (!definition) {
          const known = definitions.filter((d) => d.kind === kind).map((d) => d.name)
          problems.push(`${path}: unknown ${kind} "${name}"; known: ${known.join(', ') || '(none yet)'}`)
          continue
        }
        const result = v.safeParse(definition.options, raw)
        if (result.success) configured.push({ definition, options: result.output })
        else problems.push(...formatIssues(result.issues, path))
      }
    }
    return { configured, problems }
  }

  let perSite = new Map<string, Configured<Kind>[]>()
  const configureAll = (list: readonly SiteConfig[], prefix: (index: number) => string) => {
    const problems: string[] = []
    const next = new Map<string, Configured<Kind>[]>()
    list.forEach((site, index) => {
      const result = configure(site, prefix(index))
      problems.push(...result.problems)
      next.set(site.id, result.configured)
    })
    if (problems.length > 0) throw new BootError('Invalid configuration', problems)
    return next
  }
  perSite = configureAll(sites, (index) => `sites[${index}]`)
  // Each site's definitions of one kind, filtered once: the conversion path asks for them several times per event.
  const byKind = new Map<string, Map<Kind, readonly Configured<Kind>[]>>()
  const forSite = (siteId: string, kind: Kind): readonly Configured<Kind>[] => {
    const configured = perSite.get(siteId)
    if (!configured) return NONE_CONFIGURED
    let kinds = byKind.get(siteId)
    if (!kinds) byKind.set(siteId, kinds = new Map())
    let list = kinds.get(kind)
    if (!list) kinds.set(kind, list = Object.freeze(configured.filter((c) => c.definition.kind === kind)))
    return list
  }

  return {
    get: (kind, name) => byKey.get(`${kind}:${name}`) as never,
    list: (kind) => definitions.filter((d) => d.kind === kind) as never,
    forSite: (siteId, kind) => forSite(siteId, kind) as never,
    checkSite: (site, prefix) => configure(site, prefix).problems,
    configureSites(changed, forget = []) {
      const next = new Map([...perSite, ...configureAll(changed, (index) => `sites[${index}]`)])
      for (const id of forget) next.delete(id)
      perSite = next
      byKind.clear()
    },
  }
}

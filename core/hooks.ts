import { createHooks, type Hookable } from 'hookable'
import type { ConsolaInstance } from 'consola'
import type { StandardEvent } from './delivery/types.ts'
import { toLoggable } from './db/loggable-error.ts'
import type { AnsweredRequest } from './http/answered.ts'

type HookResult = void | Promise<void>

/** What `conversion:before-deliver` listeners see and may change: set `hold` to keep it from the platforms. */
export interface DeliveryDecision {
  siteId: string
  messageId: string
  event: string
  standardEvent: StandardEvent
  /** The site event's `release` setting; `immediately` for a standard event. */
  release: 'immediately' | 'when_qualified'
  /** false when the hook is called; the release plugin sets it for `when_qualified` events. */
  hold: boolean
  reason?: string
}

/** What `conversion:refunded` listeners see: one refund or cancellation counted against the site's order. */
export interface RefundedConversion {
  siteId: string
  orderId: string
  /** The refund's own id (idempotency key: the hook is called once per refund id and order). */
  refundId: string
  /** The amount this refund took off, in `currency`; absent: the whole value (a cancellation or full refund). */
  amount?: number
  currency?: string
  /** When the refund was made (the vendor's time). */
  at: Date
  /** The conversions marked (the trusted purchase and any public copy of the same order). */
  conversionIds: string[]
}

/**
 * What `held:act` listeners see: a person chose "Release" or "Not a fit" for one held lead (the dashboard). The release
 * plugin does it, as its release endpoint and `dcgate held drop` would, and sets `outcome`; with no listener it stays unset.
 */
export interface HeldLeadAction {
  siteId: string
  conversionId: string
  action: 'release' | 'drop'
  /** `not_held`: the lead was released, dropped or expired meanwhile, or is not the site's. */
  outcome?: 'released' | 'dropped' | 'not_held'
  /** Released: the conversions sent on their way (the person's other held ones for the same event go along). */
  released?: number
}

/** What `capture:identify` listeners see (the capture plugin calls it; the email-risk plugin fills `risk`). */
export interface IdentifyPayload {
  siteId: string
  email: string
  emailHash: string
  source: 'client_sdk' | 'form'
  country?: string
  isVpn: boolean
  /** The browser's device fingerprint, when the script could read it. */
  device?: { hash: string, short: string, confidence: number, version: number }
  risk?: { score: number, label: string, isDisposable?: boolean }
}

/**
 * What `dashboard:destination-connected` listeners see: the owner connected a platform through its Connect button
 * (plugins/dashboard/connect/) and picked an account. `options` is exactly what the adapter's options schema takes under the site's
 * `destinations.<platform>` (`crm.<platform>` for salesforce and hubspot), tokens included in clear: a listener that
 * stores it seals them (core/secrets/keyring.ts).
 */
export interface DestinationConnected {
  siteId: string
  /** The adapter's name: google_ads, microsoft_ads, linkedin, tiktok, pinterest, meta, salesforce or hubspot. */
  platform: string
  options: Record<string, unknown>
  /** Who connected it, as the audit log names them ("operator" or the member's address). */
  actor: string
}

/** What `dashboard:destination-disconnected` listeners see: the owner chose Disconnect (the vendor's grant is revoked where it offers that). */
export interface DestinationDisconnected {
  siteId: string
  platform: string
  actor: string
}

/** Where a failure happened, for the `error` hook and the log. */
export interface ErrorContext {
  /** The hook or component that failed, e.g. `hook:conversion:delivered` or `plugin:capture`. */
  source: string
  /**
   * The route pattern (`/api/v1/crm-release/:api_key/:secret`, or `(unmatched)`), when it happened while serving a
   * request; never the path, which may hold a key or the release secret.
   */
  path?: string
  /** The request's id (x-request-id), when LOG_FORMAT=json gives requests one. */
  requestId?: string
}

/**
 * Every hook dcgate calls, by `namespace:event`. Plugins add their own hooks by augmenting this
 * interface (`declare module '.../core/hooks.ts' { interface DcgateHooks { ... } }`); see docs/hooks.md.
 */
export interface DcgateHooks {
  /** Every plugin's setup has run and the server is about to listen. */
  'app:ready': () => HookResult
  /** The server is shutting down; release timers, connections and workers. */
  'app:close': () => HookResult
  /** Sites were synced from the config into the database at boot. */
  'sites:synced': (sites: readonly { id: string, copKey: string }[]) => HookResult
  /** A private key was deleted; it is already refused everywhere. */
  'keys:deleted': (key: { siteId: string, prefix: string }) => HookResult
  /**
   * A mapped conversion is about to be delivered. Set `decision.hold = true` to keep it from every
   * platform (the release plugin holds "when qualified" events here).
   */
  'conversion:before-deliver': (decision: DeliveryDecision) => HookResult
  /**
   * Erase one person's personal data on one site (a data deletion request). Every plugin holding personal data
   * listens and removes its own; listeners run isolated, so one failing does not stop the others.
   */
  'dsar:erase': (request: { siteId: string, email: string, emailHash: string }) => HookResult
  /**
   * A refund or cancellation was counted against conversions already stored (at once, or when a refund that came
   * before its order is matched to the order). Called once per refund id; platforms that take adjustments listen.
   */
  'conversion:refunded': (refund: RefundedConversion) => HookResult
  /** Release or drop one held lead (the dashboard's "Release" and "Not a fit"); the release plugin listens. */
  'held:act': (request: HeldLeadAction) => HookResult
  /**
   * An owner finished connecting a platform in the dashboard (OAuth "Connect", plugins/dashboard/connect/): the dashboard sets
   * `destinations[platform] = options` on the site made in the dashboard, validated, audited and applied on every
   * instance; a config-file site is refused (read-only). The listener throws when it is refused or invalid.
   */
  'dashboard:destination-connected': (connected: DestinationConnected) => HookResult
  /** An owner chose "Disconnect": the dashboard removes `destinations[platform]` from the site, as above. */
  'dashboard:destination-disconnected': (disconnected: DestinationDisconnected) => HookResult
  /** A visitor identified by email (before it is stored): set `payload.risk` to store a risk score with it. */
  'capture:identify': (payload: IdentifyPayload) => HookResult
  /**
   * Requests that belong to a site were answered (core/http/answered.ts): route pattern, status, refusal code and
   * message, nothing personal; a batch per turn of the event loop, after the answers. Keep listeners cheap (the
   * dashboard's live events buffer them).
   */
  'requests:answered': (requests: readonly AnsweredRequest[]) => HookResult
  /** GET /metrics is about to answer: set the gauges read at scrape time (core/metrics/registry.ts). */
  'metrics:collect': () => HookResult
  /** Something failed that must not break a response; for alerting and error trackers. */
  'error': (error: unknown, context: ErrorContext) => HookResult
}

export type DcgateHookable = Hookable<DcgateHooks>

/**
 * Every `error` listener (an error tracker, an alert) gets the error without personal data: a database error's
 * statement, parameters and detail are withheld (core/db/loggable-error.ts), however the hook was called.
 */
export function createDcgateHooks(): DcgateHookable {
  const hooks = createHooks<DcgateHooks>()
  hooks.beforeEach((event) => {
    if (event.name === 'error') event.args[0] = toLoggable(event.args[0])
  })
  return hooks
}

type HookArgs<K extends keyof DcgateHooks> = Parameters<DcgateHooks[K]>

/**
 * Calls a hook on the request path. Listeners run one after another, each isolated: a throwing
 * listener is logged and reported to the `error` hook, the next listeners still run (every plugin
 * must get its turn, e.g. to erase its data), and nothing breaks the response. Returns false when
 * a listener failed.
 */
export async function callHookSafe<K extends keyof DcgateHooks>(
  hooks: DcgateHookable, logger: ConsolaInstance, name: K, ...args: HookArgs<K>
): Promise<boolean> {
  const failures: unknown[] = []
  await hooks.callHookWith(async (listeners, callArgs) => {
    for (const listener of listeners) {
      try {
        await (listener as (...a: unknown[]) => unknown)(...callArgs)
      }
      catch (error) {
        failures.push(error)
      }
    }
  }, name, args as never)
  for (const error of failures) await reportError(hooks, logger, error, { source: `hook:${String(name)}` })
  return failures.length === 0
}

/** Logs an error and hands it to the `error` hook; a failing `error` listener is only logged. */
export async function reportError(hooks: DcgateHookable, logger: ConsolaInstance, raw: unknown, context: ErrorContext): Promise<void> {
  const error = toLoggable(raw)
  const message = `[${context.source}]${context.path ? ` ${context.path}` : ''}`
  // As a log object, so the JSON reporter writes requestId as a field of its own (core/logger.ts).
  if (context.requestId) logger.error({ args: [message, error], requestId: context.requestId })
  else logger.error(message, error)
  try {
    await hooks.callHookParallel('error', error, context)
  }
  catch (hookError) {
    logger.error('[hook:error] an error listener failed', hookError)
  }
}

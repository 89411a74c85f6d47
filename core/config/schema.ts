import * as v from 'valibot'
import { strictOptions } from '../options.ts'
import { proxyEntryProblem } from '../http/client-ip.ts'
import { normalizeCountry } from '../identity/normalize.ts'

/** Standard conversion names every site understands (spec: "Standard events"). */
export const STANDARD_EVENTS = ['Purchase', 'Lead', 'CompleteRegistration', 'Schedule'] as const

/** `sites[].consent.usPrivacy`: what happens to the conversions of a person who opted out under a US state law. */
export const US_PRIVACY_MODES = ['off', 'limited', 'drop'] as const
export type UsPrivacyMode = typeof US_PRIVACY_MODES[number]

/** Objects reject unknown keys, so a misspelt key (`sever:`, `destinaton:`) stops boot instead of being ignored. */
export const strict = <const E extends v.ObjectEntries>(entries: E) => strictOptions(entries)

const Url = v.pipe(v.string(), v.url('must be an absolute URL such as https://track.example.com'))
export const NonEmpty = v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'))
const ServerSecret = v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'), v.regex(/^[^\s,]+$/, 'must not contain spaces or commas'))

/** An address, a CIDR or a range name (`loopback`, `private`). */
const ProxyEntry = v.pipe(v.string('must be a string'), v.trim(), v.check((value) => proxyEntryProblem(value) === undefined, (issue) => proxyEntryProblem(String(issue.input)) ?? 'is invalid'))

function TrustProxySchema() {
  return v.union([
    v.boolean(),
    v.pipe(v.number(), v.integer('must be a whole number of proxy hops'), v.minValue(1, 'must be at least 1 (false trusts no proxy)'), v.maxValue(10, 'must be at most 10')),
    v.pipe(v.array(ProxyEntry), v.minLength(1, 'must list at least one proxy (false trusts none)')),
  ], 'must be true, false, a number of proxy hops, or a list of proxy addresses and CIDRs')
}

const ServerSchema = strict({
  port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535)), 3000),
  /** Interface to listen on; unset listens on every interface. */
  host: v.optional(NonEmpty),
  /** Public URL of this server, used in links and the script tag. Defaults to http://localhost:<port>. */
  baseUrl: v.optional(Url),
  /** Host the tracking script is served from, when it differs from baseUrl. */
  cdnUrl: v.optional(Url),
  /** Host of the public deletion status page, when it differs from baseUrl. */
  statusBaseUrl: v.optional(Url),
  /** Largest request body accepted, in bytes; larger bodies get 413. */
  bodyLimit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024)), 1_048_576),
  /**
   * Which proxies in front may report the client's address (X-Forwarded-For, read from the right): false (none),
   * true (loopback and private networks), a number of proxy hops, or addresses, CIDRs, 'loopback', 'private'.
   */
  trustProxy: v.optional(TrustProxySchema(), false),
  /**
   * Start beside other instances on the same PostgreSQL although this one or another has no Redis (a deleted key then
   * stays valid on the others for up to 5 minutes). Refused at start unless set; warns at every start when set.
   */
  allowMemoryStorageWithPeers: v.optional(v.boolean(), false),
  /**
   * The key material of what dcgate encrypts at rest (core/secrets/); generated into <dataDir>/server-secret when
   * unset. Set it (the same on every instance) when several instances share a database.
   */
  secret: v.optional(ServerSecret),
  /** Secrets that came before `secret`: what they sealed stays readable, and is sealed again with `secret` at start. */
  previousSecrets: v.optional(v.array(ServerSecret), []),
})

const Millis = (min: number, fallback: number) => v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(600_000)), fallback)

const DatabaseSchema = strict({
  url: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'))),
  /** Opening a connection; a database that does not answer fails the request instead of holding it. */
  connectTimeoutMs: Millis(100, 3000),
  /** Waiting for a free pooled connection. */
  acquireTimeoutMs: Millis(100, 3000),
  /** PostgreSQL cancels a longer statement; the client gives up 0.5 s later on a database that went silent. */
  statementTimeoutMs: Millis(100, 3000),
})

const StorageSchema = strict({
  url: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\//, 'must be a redis:// URL'))),
  /** Opening the Redis connection. */
  connectTimeoutMs: Millis(100, 2000),
  /** One Redis command, queued ones included; a connection that stays silent this long is replaced. */
  commandTimeoutMs: Millis(100, 2000),
})

const AdminSchema = strict({
  /** Bearer token for the admin API; generated into <dataDir>/admin-token when unset. */
  token: v.optional(v.pipe(v.string(), v.minLength(16, 'must be at least 16 characters'))),
  /** Answer admin API calls from other hosts too (the token is still required). */
  allowRemote: v.optional(v.boolean(), false),
  /**
   * Addresses (or CIDRs, `loopback`, `private`) reverse proxies connect to dcgate from. A request whose TCP peer is
   * one of them is relayed, never local: it needs the admin token on /metrics and is refused by the loopback-only
   * admin API, with or without forwarding headers. Unset: the addresses `server.trustProxy` lists, if it is a list.
   */
  trustedProxies: v.optional(v.array(ProxyEntry)),
})

const DeliverySchema = strict({
  /** Attempts per platform before a delivery ends `failed`. */
  maxAttempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50)), 8),
  /** First retry delay; doubles per attempt (with jitter), capped at retryMaxMs. */
  retryBaseMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 30_000),
  retryMaxMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 3_600_000),
  /** How often the worker looks for due deliveries. */
  workerIntervalMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 1000),
  /** How long a claimed delivery is held; after a crash, another worker takes it over once this runs out. */
  leaseSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), 60),
  /**
   * How long an event waits for others going to the same platform account before its request goes out, in ms:
   * concurrent conversions share one request (up to the adapter's maxBatchSize). 0 sends at once; under load the
   * events gather anyway while earlier requests are in flight.
   */
  batchWindowMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1000)), 5),
  /**
   * How long a conversion's first attempt waits for a platform's next request-budget window (one second) before it is
   * answered queued and sent with the next batch after the answer, in ms. A short wait answers `sent` with the
   * platform's verdict; 0 never holds the caller. 50 by default: under a load past a platform's budget, a longer wait
   * becomes every answer's latency (at 250 ms the conversions benchmark's p99 was 330 ms, at 50 ms about 200).
   */
  budgetWaitMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1000)), 50),
  /**
   * Days after a conversion was received during which a failed delivery of it may be retried from the dashboard or the
   * CLI: its IP address and user agent are kept that long, then erased, and a later retry is refused.
   */
  retryWindowDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(90)), 7),
  /** Timeout of one platform call. */
  requestTimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100)), 10_000),
  /** Seconds a public conversion with a page-chosen messageId waits before its first attempt, for a trusted copy to supersede it; 0 sends at once. */
  publicGraceSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(3600)), 120),
})

export const RetentionDays = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(36_500))

const MailSchema = strict({
  smtp: v.optional(v.pipe(v.string(), v.regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://'))),
  from: v.optional(NonEmpty, 'dcgate <no-reply@localhost>'),
  /** Mails written to <dataDir>/outbox/ (no smtp) are deleted this many days after they were written. */
  outboxRetentionDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3650)), 7),
})

/** A name stored in a column of 255 characters (sites.name, conversions.event): longer would fail at the database. */
const ShortName = v.pipe(NonEmpty, v.maxLength(200, 'must be at most 200 characters'))

const SiteEventSchema = strict({
  key: v.pipe(ShortName, v.regex(/^[A-Za-z0-9_.:-]+$/, 'may hold letters, digits, _ . : and - only')),
  name: ShortName,
  sendsAs: v.optional(v.nullable(v.picklist(STANDARD_EVENTS))),
  release: v.optional(v.picklist(['immediately', 'when_qualified']), 'immediately'),
  active: v.optional(v.boolean(), true),
})

/** Per-adapter options stay opaque here; the registry validates them against each adapter's schema. */
const AdapterOptions = v.record(v.string(), v.record(v.string(), v.unknown()))

export const SiteSchema = strict({
  id: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be lower-case letters, digits, _ or -, starting with a letter or digit')),
  name: ShortName,
  domains: v.optional(v.array(NonEmpty), []),
  status: v.optional(v.picklist(['active', 'paused']), 'active'),
  plan: v.optional(v.picklist(['free', 'business', 'organization']), 'free'),
  /** Pin the public key instead of generating one (e.g. when moving servers). */
  copKey: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{16,64}$/, 'must be 16 to 64 URL-safe characters'))),
  /** Pin the release secret instead of generating one. */
  releaseSecret: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{24,128}$/, 'must be 24 to 128 URL-safe characters'))),
  events: v.optional(v.array(SiteEventSchema), []),
  destinations: v.optional(AdapterOptions, {}),
  crm: v.optional(AdapterOptions, {}),
  sources: v.optional(AdapterOptions, {}),
  deletion: v.optional(strict({ enabled: v.optional(v.boolean(), true) }), {}),
  consent: v.optional(strict({
    banner: v.optional(v.picklist(['eu', 'always', 'off']), 'eu'),
    /** The banner's words by language tag; the script picks the visitor's language, else the first one given. */
    text: v.optional(v.record(
      v.pipe(v.string(), v.toLowerCase(), v.regex(/^[a-z]{2,3}(-[a-z0-9]{2,8})*$/, 'must be a language tag such as de or fr-ca')),
      strict({
        message: v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(600)),
        accept: v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(40)),
        reject: v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(40)),
      }),
    )),
    /**
     * A person who opted out of the sale or sharing of their data under a US state law (the browser's Global Privacy
     * Control, or a server conversion's `context.consent`), in the US or of unknown location: `off` sends their
     * conversions as usual, `limited` sends them with each platform's limited-data-use signal, `drop` sends nothing
     * (each delivery ends `skipped`, saying why). EU consent is `banner`'s, whatever this says.
     */
    usPrivacy: v.optional(v.picklist(US_PRIVACY_MODES), 'off'),
    /**
     * Whose consent the tracking script follows: `auto` (default) the site's consent tool when one is on the page (IAB
     * TCF `__tcfapi`, Google Consent Mode in `dataLayer`, IAB GPP `__gpp`), else dcgate's banner; `tcf`,
     * `consent-mode` or `gpp` that tool only; `banner` dcgate's banner only; `manual` only `dcutils.consent(…)`.
     */
    source: v.optional(v.picklist(['auto', 'tcf', 'consent-mode', 'gpp', 'banner', 'manual']), 'auto'),
  }), {}),
  /** The tracking script's per-site settings (plugins/capture). */
  capture: v.optional(strict({
    /** Forms whose submit identifies the visitor (after consent): CSS selector of the form, name of the email field. */
    forms: v.optional(v.array(strict({
      selector: NonEmpty,
      emailField: NonEmpty,
      phoneField: v.optional(NonEmpty),
      firstNameField: v.optional(NonEmpty),
      lastNameField: v.optional(NonEmpty),
    })), []),
    /** Shared with a server-side capture worker; /collect/worker believes the IP in the body only with it. */
    workerSecret: v.optional(v.pipe(v.string(), v.minLength(24, 'must be at least 24 characters'))),
    /** This site's own retention, instead of capture.retentionDays. */
    retentionDays: v.optional(RetentionDays),
  }), {}),
  /**
   * The country a national phone number (or ZIP code) of this site's conversions is read in when the conversion gives
   * none: `030 1234567` with `DE` is +49 30 1234567; without one, such a number cannot be matched and is left out.
   */
  defaultCountry: v.optional(v.pipe(
    v.string('must be a country code such as DE, or a country name'), v.trim(),
    v.check((value) => normalizeCountry(value) !== undefined, 'must be a country code such as DE, or a country name'),
  )),
  /** A subdomain of the site that CNAMEs to the shared script host (e.g. t.shop.example); served first-party once verified. */
  firstPartyHost: v.optional(v.pipe(v.string(), v.toLowerCase(), v.regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a host name such as t.shop.example'))),
  /** Delivery health alerts (core/health): who is told when a destination fails, and when it counts as failing. */
  alerts: v.optional(strict({
    /** true: the site's members; false: nobody; or a list of addresses. */
    email: v.optional(v.union([
      v.boolean(),
      v.array(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(254), v.email('must be an email address such as owner@shop.example'))),
    ], 'must be true, false or a list of email addresses'), true),
    /** Also POSTed here as JSON (docs/delivery-health.md). */
    webhookUrl: v.optional(v.pipe(v.string(), v.url('must be an absolute URL such as https://hooks.example.com/dcgate'), v.regex(/^https?:\/\//, 'must be an http or https URL'))),
    /** Signs the webhook's body (HMAC-SHA256, header x-dcgate-signature) when set. */
    webhookSecret: v.optional(v.pipe(v.string(), v.minLength(24, 'must be at least 24 characters'))),
    /** Alert when more than this share (0 to 1) of a destination's ended deliveries in the window failed. */
    failureRate: v.optional(v.pipe(v.number('must be a number from 0 to 1'), v.minValue(0, 'must be at least 0'), v.maxValue(1, 'must be at most 1')), 0.25),
    windowMinutes: v.optional(v.pipe(v.number(), v.integer('must be a whole number of minutes'), v.minValue(5, 'must be at least 5'), v.maxValue(10_080, 'must be at most 10080 (a week)')), 60),
  }), {}),
  /** Who may sign in to this site's dashboard with an emailed link (plugins/dashboard); the operator sees every site. */
  members: v.optional(v.array(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(254), v.email('must be an email address such as owner@shop.example'))), []),
})

/**
 * `oauth.<platform>`: the operator's own OAuth app per vendor, for the dashboard's Connect buttons (plugins/dashboard/connect/).
 * The URL overrides point the flow at a proxy or a fake; `apiBaseUrl` also becomes the connected destination's baseUrl.
 */
const OAuthAppSchema = strict({
  clientId: NonEmpty,
  clientSecret: NonEmpty,
  authorizeUrl: v.optional(Url),
  tokenUrl: v.optional(Url),
  apiBaseUrl: v.optional(Url),
  /** Microsoft Advertising only: the developer token its Customer and Campaign Management APIs take with every call. */
  developerToken: v.optional(NonEmpty),
})
export const OAUTH_PLATFORMS = ['google', 'microsoft_ads', 'linkedin', 'tiktok', 'pinterest', 'salesforce', 'hubspot'] as const
export type OAuthPlatform = typeof OAUTH_PLATFORMS[number]
const OAuthSchema = strict({
  ...Object.fromEntries(OAUTH_PLATFORMS.map((name) => [name, v.optional(OAuthAppSchema)])) as Record<OAuthPlatform, v.OptionalSchema<typeof OAuthAppSchema, undefined>>,
  /** Meta takes a pasted system-user token (no OAuth app): only where the Graph API is reached, for a proxy or a fake. */
  meta: v.optional(strict({ apiBaseUrl: v.optional(Url) })),
})
export type OAuthAppConfig = v.InferOutput<typeof OAuthAppSchema>

/** A plugin given inline in the config (a definePlugin result) rather than by built-in name. */
const InlinePlugin = v.custom<{ name: string, setup: (...args: never[]) => unknown }>(
  (value) => typeof value === 'object' && value !== null
    && typeof (value as { name?: unknown }).name === 'string'
    && typeof (value as { setup?: unknown }).setup === 'function',
  'must be a built-in plugin name or a definePlugin({ name, setup }) result',
)

export const ConfigSchema = v.pipe(
  strict({
    server: v.optional(ServerSchema, {}),
    dataDir: v.optional(NonEmpty, '.data'),
    database: v.optional(DatabaseSchema, {}),
    storage: v.optional(StorageSchema, {}),
    mail: v.optional(MailSchema, {}),
    admin: v.optional(AdminSchema, {}),
    delivery: v.optional(DeliverySchema, {}),
    plugins: v.optional(v.array(v.union([NonEmpty, InlinePlugin], 'must be a built-in plugin name or a definePlugin({ name, setup }) result'))),
    sites: v.optional(v.array(SiteSchema), []),
    oauth: v.optional(OAuthSchema, {}),
  }),
  v.check((config) => unique(config.sites.map((s) => s.id)), 'sites: every site id must be unique'),
  v.check((config) => unique(config.sites.flatMap((s) => (s.copKey ? [s.copKey] : []))), 'sites: a pinned copKey may belong to one site only'),
)

/** The config keys the kernel owns; every other top-level key is a plugin's section (core/plugin.ts). */
export const CORE_KEYS: readonly string[] = ['server', 'dataDir', 'database', 'storage', 'mail', 'admin', 'delivery', 'plugins', 'sites', 'oauth']

/**
 * Plugins' config sections as a config file writes them. Each plugin with options adds its own:
 * `declare module '.../core/config/schema.ts' { interface PluginSections { capture?: ... } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PluginSections {}
/** Plugins' config sections after validation, with their defaults (augmented like PluginSections). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ResolvedPluginSections {}

export type ConfigInput = v.InferInput<typeof ConfigSchema> & PluginSections
export type ResolvedConfig = v.InferOutput<typeof ConfigSchema> & ResolvedPluginSections & {
  /** Absolute path of the file the config was loaded from, when it came from a file. */
  configFile?: string
}
export type SiteConfig = ResolvedConfig['sites'][number]
export type SiteEventConfig = SiteConfig['events'][number]

function unique(values: string[]): boolean {
  return new Set(values).size === values.length
}

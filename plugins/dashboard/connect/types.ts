/** What each vendor's Connect descriptor (one file per vendor here) provides; README.md says what each vendor documents. */
import type { OAuthAppConfig, OAuthPlatform } from '../../../core/config/schema.ts'

/** The operator's app for this vendor with every URL resolved (the config's overrides, else the vendor's own). */
export interface ConnectApp {
  clientId: string
  clientSecret: string
  /** Microsoft Advertising's developer token (its APIs take it with every call). */
  developerToken?: string
  authorizeUrl: string
  tokenUrl: string
  apiBaseUrl: string
  /** `<server.baseUrl>/dashboard/oauth/<platform>/callback`, as registered with the vendor. */
  redirectUri: string
  /** The URLs the config overrides: `apiBaseUrl` becomes the new destination's `baseUrl`, `tokenUrl` its token URL. */
  overrides: { tokenUrl?: string, apiBaseUrl?: string }
}

/** What the token endpoint granted, plus the fields a vendor adds (Salesforce instance_url, TikTok advertiser_ids…). */
export interface Grant {
  accessToken: string
  refreshToken?: string
  fields: Record<string, string>
}

/** One choice in a pick list: what the owner reads and the value sent back. */
export interface Choice { value: string, label: string }

/** One list the owner picks from; `perEvent` asks once per standard event (conversion actions, rules). */
export interface PickField {
  name: string
  label: string
  choices: Choice[]
  perEvent?: boolean
  /** May be left empty (a per-event pick with nothing chosen skips that event). */
  optional?: boolean
  /** A text field instead of a list (a value the vendor's API cannot list, such as Microsoft's UET token). */
  text?: boolean
}

/** The owner's answers: field name → value; per-event fields as `<name>.<StandardEvent>`. */
export interface Picked { get: (name: string) => string | null | undefined }

/** An outbound call with the flow's timeout. */
export type Fetch = (url: string, init?: RequestInit) => Promise<Response>

export interface VendorContext {
  app: ConnectApp
  fetch: Fetch
  /** The site's event keys, for the CRM pollers' `eventName`. */
  siteEvents: readonly string[]
}

export interface ConnectVendor {
  /** The key under `oauth.` and in the route (`/dashboard/oauth/<platform>/…`); `meta` has no OAuth app. */
  platform: OAuthPlatform | 'meta'
  /** The adapter it configures, the key under the site's destinations (or crm). */
  adapter: string
  kind: 'ad-platform' | 'crm-poller'
  label: string
  defaults: { authorizeUrl: string, tokenUrl: string, apiBaseUrl: string }
  scopes: readonly string[]
  /** The vendor documents PKCE (RFC 7636, S256) for this flow. */
  pkce: boolean
  /** The authorization URL for this state (and PKCE challenge). */
  authorizeUrl: (app: ConnectApp, state: string, challenge: string | undefined) => string
  exchange: (ctx: VendorContext, code: string, verifier: string | undefined) => Promise<Grant>
  /** What the account holds, for the owner to pick from. */
  list: (ctx: VendorContext, grant: Grant) => Promise<PickField[]>
  /** The adapter's options for what was picked; throws PickProblem when the picks do not fit. */
  toOptions: (ctx: VendorContext, grant: Grant, picked: Picked) => Record<string, unknown> | Promise<Record<string, unknown>>
  /** Revokes the grant held in the destination's options, where the vendor offers it. */
  revoke?: (ctx: VendorContext, options: Record<string, unknown>) => Promise<void>
}

export type { OAuthAppConfig }

import type { H3Event } from 'h3'
import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import type { AdminApi } from './admin-api.ts'
import type { Html } from './html.ts'

/** Who is signed in: the operator (admin token, every site) or a site member (emailed link, their sites only). */
export interface Viewer {
  kind: 'operator' | 'member'
  /** The member's address; undefined for the operator. */
  email?: string
  /** How the audit log and the header name this person: "operator" or the member's address. */
  label: string
}

/** A message shown once on the next page after an action's redirect. */
export interface Flash {
  text: string
  /** A secret shown in full this once, with a copy button (a new key). */
  secret?: string
  kind?: 'ok' | 'error'
}

/** What a page's render gets. */
export interface PageContext {
  event: H3Event
  viewer: Viewer
  site: ActiveSite
  /** The query string, already checked for text PostgreSQL cannot store. */
  query: URLSearchParams
  /** The kernel's services: `prepared` for SQL (through the plugin's queries/), `config`, `registry`, `sites`… */
  plugin: PluginContext
  /** The admin API in-process (keys, site details, deliveries' retry): acts as the CLI does. */
  admin: AdminApi
  /** Goes in every form as the hidden field `csrf` (html.ts `csrfField`). */
  csrf: string
  /** `/dashboard/sites/<site>/<slug>` (and `/<action>` when given), for links and form actions. */
  href: (slug: string, action?: string) => string
  /** The message the last action left, if any. */
  flash?: Flash
}

/** A page: its `<title>`/heading and its main content; the layout adds the navigation. */
export interface PageResult {
  title: string
  body: Html
  status?: number
  /**
   * Origins outside dcgate that this page's forms lead to (a vendor's consent page, reached by the 303 after
   * "Connect"): the page's CSP form-action names them, as browsers apply it to a form's redirects too.
   */
  formTargets?: readonly string[]
}

/** What an action gets: the page's context plus the posted form (CSRF already checked). */
export interface ActionContext extends PageContext {
  form: URLSearchParams
}

/**
 * What an action did. `audit` is written to the audit log (who and when are added); `flash` is shown on the page the
 * browser is sent back to (303) with `query` as its query string (e.g. the filter it came from).
 */
export interface ActionResult {
  audit: { action: string, detail?: string }
  flash?: Flash
  query?: string
}

/**
 * One page of a site's dashboard, served at GET /dashboard/sites/:site/<slug>; each action at
 * POST /dashboard/sites/:site/<slug>/<action name> (signed in, CSRF-checked, audit-logged, then 303 back to the page).
 * An action throws `actionError(status, text)` to refuse with a message; nothing is logged to the audit then.
 */
export interface DashboardPage {
  slug: string
  /** The navigation link's text, exactly as the browser tests name it ("Overview", "Keys"…). */
  nav: string
  render: (ctx: PageContext) => Promise<PageResult>
  actions?: Readonly<Record<string, (ctx: ActionContext) => Promise<ActionResult>>>
  /**
   * A form posted to the page's own address (POST /dashboard/sites/:site/<slug>, CSRF-checked): answers the page again
   * (e.g. with each field's message, status 400), or `{ flash }` to send the browser back to the page (303). It
   * writes its own audit entries (the site form's changes are audited wherever they come from).
   */
  submit?: (ctx: ActionContext) => Promise<PageResult | { flash: Flash }>
}

export function definePage(page: DashboardPage): DashboardPage {
  return page
}

/** An action refused for a reason the viewer should read (400 page with the text); never logged to the audit. */
export class ActionError extends Error {
  override name = 'ActionError'
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

export const actionError = (status: number, message: string) => new ActionError(status, message)

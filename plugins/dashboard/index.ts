/**
 * The dashboard for site owners (issue 19, docs/dashboard.md): server-rendered HTML at /dashboard, on the public
 * port, for the operator (admin token) and each site's members (emailed one-time link).
 *
 * How a page is added (the contract part B's pages follow):
 * - A page is a `DashboardPage` (./page.ts): `definePage({ slug, nav, render(ctx), actions? })`, in its own file under
 *   ./pages/, and one line in the `pages` list of ./pages/index.ts (navigation order; the first is a site's home).
 * - GET /dashboard/sites/:site/<slug> calls `render(ctx)` with a `PageContext`: the signed-in `viewer`, the `site`
 *   (ActiveSite, access already checked: 403 for a member of another site), the parsed `query` (URLSearchParams,
 *   already refused when it holds NUL or unpaired surrogates), `plugin` (the PluginContext: `prepared`, `config`,
 *   `registry`…), `admin` (the admin API in-process: ./admin-api.ts), `csrf` for forms, `href(slug, action?)` and
 *   the `flash` message the last action left. It returns `{ title, body }`, `body` written with the escaping
 *   `html` tagged template of ./html.ts (`raw()` only for our own markup; `time()` for dates, `csrfField()` in forms).
 * - Each action `actions[name](ctx)` answers POST /dashboard/sites/:site/<slug>/<name>: the form is read
 *   (urlencoded, text checked), its `csrf` field checked against the session, then the action runs with `ctx.form`
 *   and returns `{ audit: { action, detail? }, flash?, query? }`; the audit entry is written and the browser is sent
 *   back (303) to the page, with `query` as its query string. `throw actionError(status, text)` refuses with a message.
 * - A page may also take a form posted to its own address (`submit`): it answers the page again (field messages) or
 *   `{ flash }` for a 303 back; it audits itself (the Settings page, ./pages/settings.ts).
 * - Pages keep their SQL in ./queries/<page>.ts as named functions run with `ctx.plugin.prepared`.
 * - The layout (./html.ts `layout`) draws the header and the site navigation from `pages`; CSS and JS are files in
 *   ./assets/ (the CSP allows no inline script or style, nor `style=` attributes: use classes).
 */
import { resolveAdminToken } from '../../core/admin/token.ts'
import { createMailer } from '../../core/mail/mailer.ts'
import { definePlugin } from '../../core/plugin.ts'
import { createAdminApi } from './admin-api.ts'
import { DashboardAudit, DashboardLiveRequest, DashboardUsedLink } from './entities.ts'
import { createLinks } from './links.ts'
import { recordLiveEvents } from './live/recorder.ts'
import { DashboardOptions } from './options.ts'
import { pages } from './pages/index.ts'
import { addAssetRoutes } from './routes/assets.ts'
import { addNewSiteRoutes } from './routes/new-site.ts'
import { addConnectRoutes } from './routes/connect.ts'
import { addPageRoutes } from './routes/pages.ts'
import { addSignInRoutes } from './routes/sign-in.ts'
import { createDashboard } from './service.ts'
import { createSessions } from './session.ts'
import { listenForConnections } from './site-hooks.ts'

export default definePlugin({
  name: 'dashboard',
  entities: [DashboardAudit, DashboardUsedLink, DashboardLiveRequest],
  options: DashboardOptions,
  setup(ctx, options) {
    // The same token the admin API checks (core/admin/token.ts): from the config, else <dataDir>/admin-token.
    const adminToken = resolveAdminToken(ctx.config.admin.token, ctx.config.dataDir)
    const mailer = createMailer(ctx.config, ctx.logger)
    const dashboard = createDashboard({
      ctx, options, adminToken, mailer,
      sessions: createSessions(ctx.storage, { hours: options.sessionHours, trustProxy: ctx.config.server.trustProxy, adminToken }),
      links: createLinks(ctx.storage, ctx.prepared, options.linkMinutes),
      admin: createAdminApi(ctx.app, adminToken),
    })
    recordLiveEvents(ctx)
    addAssetRoutes(ctx)
    const { home } = addPageRoutes(dashboard, pages)
    addSignInRoutes(dashboard, home)
    addNewSiteRoutes(dashboard)
    listenForConnections(ctx, dashboard.edits)
    addConnectRoutes(dashboard)
    ctx.hooks.hook('app:close', () => mailer.close())
  },
})

import type { H3Event } from 'h3'
import { mayView, sitesOf } from '../access.ts'
import { sameSecret } from '../csrf.ts'
import { html, layout } from '../html.ts'
import { ActionError, type DashboardPage, type Flash, type PageContext, type PageResult } from '../page.ts'
import { allowFormTargets, readForm, readQuery, redirect, sendPage, sendProblem } from '../respond.ts'
import type { Dashboard } from '../service.ts'
import type { Session } from '../session.ts'

const tags = ['Dashboard']
const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/

/**
 * The signed-in part: the list of sites (returned to GET /dashboard through `home`), and each site's pages at
 * /dashboard/sites/:site/:slug with their actions at /dashboard/sites/:site/:slug/:action. Signed out, a page sends
 * the browser to the sign-in; a member asking for a site that does not list them gets 403 (the same whether the
 * site exists or not).
 */
export function addPageRoutes(dashboard: Dashboard, pages: readonly DashboardPage[]): { home: (event: H3Event) => Promise<string | null> } {
  const { ctx, sessions } = dashboard
  const nav = pages.map(({ slug, nav }) => ({ slug, nav }))
  const bySlug = new Map(pages.map((page) => [page.slug, page]))
  const href = (siteId: string) => (slug: string, action?: string) => `/dashboard/sites/${encodeURIComponent(siteId)}/${slug}${action ? `/${action}` : ''}`

  /** The page's context, or the answer refusing the request. */
  const open = async (event: H3Event) => {
    const current = await sessions.read(event)
    if (!current) return { answer: redirect(event, '/dashboard') }
    const { session } = current
    const account = { label: session.viewer.label, csrf: session.csrf }
    const params = event.context.params ?? {}
    const siteId = String(params.site ?? '')
    const site = NAME.test(siteId) ? ctx.sites.byId(siteId) : undefined
    if (session.viewer.kind === 'member' && (!site || !mayView(session.viewer, site))) {
      return { answer: sendProblem(event, 403, 'Not your site', 'This site is not one of yours.', account) }
    }
    if (!site) return { answer: sendProblem(event, 404, 'No such site', 'No site here has this id.', account) }
    const page = bySlug.get(String(params.slug ?? ''))
    if (!page) return { answer: sendProblem(event, 404, 'No such page', 'This site has no page at this address.', account) }
    const query = readQuery(event)
    if (!query) return { answer: sendProblem(event, 400, 'Not accepted', 'The address holds a value that is too long or cannot be stored.', account) }
    const context: PageContext = {
      event, viewer: session.viewer, site, query, plugin: ctx, admin: dashboard.admin, csrf: session.csrf, href: href(site.id),
    }
    return { current, page, context, account }
  }

  /** A posted form's page context: signed in, the form read and its CSRF token checked, or the answer refusing it. */
  const openPosted = async (event: H3Event) => {
    const opened = await open(event)
    if (!opened.page) return opened
    const read = await readForm(event)
    if ('problem' in read) return { answer: sendProblem(event, read.status, 'Not accepted', read.problem, opened.account) }
    if (!sameSecret(read.form.get('csrf'), opened.current.session.csrf)) {
      return { answer: sendProblem(event, 403, 'Not accepted', 'This form expired or came from elsewhere. Reload the page and try again.', opened.account) }
    }
    return { ...opened, form: read.form }
  }

  /** A page's answer in the layout, with the site's navigation. */
  const answerPage = (event: H3Event, context: PageContext, slug: string, result: PageResult, account: { label: string, csrf: string }, flash?: Flash) => {
    const page = sendPage(event, result.status ?? 200, layout({
      title: `${result.title} · ${context.site.name}`, body: result.body, session: account, flash,
      site: { id: context.site.id, name: context.site.name, nav, current: slug },
    }))
    allowFormTargets(event, result.formTargets ?? [])
    return page
  }

  ctx.routes.add({
    method: 'GET', path: '/dashboard/sites/:site', auth: 'none', tags, summary: 'A site\'s dashboard (its first page)',
    handler: (event) => redirect(event, `${href(String(event.context.params?.site ?? ''))(pages[0]!.slug)}`),
  })

  ctx.routes.add({
    method: 'GET', path: '/dashboard/sites/:site/:slug', auth: 'none', tags, summary: 'A page of a site\'s dashboard',
    handler: async (event) => {
      const opened = await open(event)
      if (!opened.page) return opened.answer
      const { current, page, context, account } = opened
      const flash = await takeFlash(dashboard, current)
      return answerPage(event, context, page.slug, await page.render({ ...context, flash }), account, flash)
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/sites/:site/:slug', auth: 'none', tags, summary: 'A form posted to a site\'s dashboard page (the site settings)',
    handler: async (event) => {
      const opened = await openPosted(event)
      if (!opened.page) return opened.answer
      const { current, page, context, account, form } = opened
      if (!page.submit) return sendProblem(event, 404, 'No such action', 'This page takes no form.', account)
      const result = await page.submit({ ...context, form })
      if ('flash' in result) {
        await sessions.save(current.key, { ...current.session, flash: result.flash })
        return redirect(event, context.href(page.slug))
      }
      return answerPage(event, context, page.slug, result, account)
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/sites/:site/:slug/:action', auth: 'none', tags, summary: 'An action on a site\'s dashboard page (a form)',
    handler: async (event) => {
      const opened = await openPosted(event)
      if (!opened.page) return opened.answer
      const { current, page, context, account, form } = opened
      const name = String(event.context.params?.action ?? '')
      const action = Object.hasOwn(page.actions ?? {}, name) ? page.actions![name] : undefined
      if (!action) return sendProblem(event, 404, 'No such action', 'This page has no such action.', account)
      const back = context.href(page.slug)
      try {
        const result = await action({ ...context, form })
        await dashboard.audit(context.viewer, context.site.id, result.audit.action, result.audit.detail)
        if (result.flash) await sessions.save(current.key, { ...current.session, flash: result.flash })
        return redirect(event, result.query ? `${back}?${result.query}` : back)
      }
      catch (error) {
        if (!(error instanceof ActionError)) throw error
        await sessions.save(current.key, { ...current.session, flash: { text: error.message, kind: 'error' } })
        return redirect(event, back)
      }
    },
  })

  return {
    async home(event) {
      const current = await sessions.read(event)
      if (!current) return null
      const { viewer, csrf } = current.session
      const sites = sitesOf(viewer, ctx.sites)
      const create = viewer.kind === 'operator' ? html`<p><a class="button" href="/dashboard/new-site">New site</a></p>` : ''
      const body = html`<h1>Your sites</h1>${create}${sites.length
        ? html`<ul class="sites">${sites.map((site) => html`<li><a href="${href(site.id)(pages[0]!.slug)}">${site.name}</a> <span class="muted">${site.id}</span>${
          site.origin === 'dashboard' ? '' : html` <span class="badge">managed in the config file</span>`}</li>`)}</ul>`
        : html`<p>No site lists this address among its members.</p>`}`
      return sendPage(event, 200, layout({ title: 'Sites', body, session: { label: viewer.label, csrf } }))
    },
  }
}

/** The message the last action left, shown once. */
async function takeFlash(dashboard: Dashboard, current: { key: string, session: Session }) {
  const { flash, ...rest } = current.session
  if (flash) await dashboard.sessions.save(current.key, rest)
  return flash
}

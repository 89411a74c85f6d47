import type { H3Event } from 'h3'
import { PickProblem, VendorError } from '../connect/errors.ts'
import { createFlows } from '../connect/flows.ts'
import { timedFetch } from '../connect/http.ts'
import type { ConnectVendor, VendorContext } from '../connect/types.ts'
import { appOf, vendorOf } from '../connect/vendors.ts'
import { mayEdit } from '../access.ts'
import { sameSecret } from '../csrf.ts'
import { layout, type Html } from '../html.ts'
import { readForm, redirect, sendPage, sendProblem } from '../respond.ts'
import type { Dashboard } from '../service.ts'
import type { Session } from '../session.ts'

export type Current = { key: string, session: Session }

/** What the Connect routes share: the flows, the vendor context, the checks every form goes through, the answers. */
export function connectHelpers(dashboard: Dashboard) {
  const { ctx, sessions } = dashboard
  const flows = createFlows(ctx.storage, ctx.keyring)
  const fetch = timedFetch(ctx.config.delivery.requestTimeoutMs)
  const page = (event: H3Event, status: number, title: string, body: Html, current?: Current) =>
    sendPage(event, status, layout({ title, body, session: current && { label: current.session.viewer.label, csrf: current.session.csrf } }))
  const problem = (event: H3Event, status: number, text: string, current?: Current) =>
    sendProblem(event, status, 'Not connected', text, current && { label: current.session.viewer.label, csrf: current.session.csrf })

  const vendorContext = (vendor: ConnectVendor, siteId: string): VendorContext | undefined => {
    const app = appOf(ctx.config, vendor, dashboard.baseUrl)
    const site = ctx.sites.byId(siteId)
    return app && { app, fetch, siteEvents: site?.config.events.filter((e) => e.active).map((e) => e.key) ?? [] }
  }
  /** The viewer may change this site's connections: the operator, or a member when the operator allows it. */
  const mayEditSite = (current: Current, siteId: string) => {
    const site = ctx.sites.byId(siteId)
    return !!site && mayEdit(current.session.viewer, site, dashboard.options.membersMayEdit)
  }

  /** A signed-in POST with its CSRF field checked, for a site the viewer may edit, of a vendor with an app. */
  const openPost = async (event: H3Event) => {
    const current = await sessions.read(event)
    if (!current) return { answer: redirect(event, '/dashboard') }
    const read = await readForm(event)
    if ('problem' in read) return { answer: problem(event, read.status, read.problem, current) }
    if (!sameSecret(read.form.get('csrf'), current.session.csrf)) return { answer: problem(event, 403, 'This form expired or came from elsewhere. Reload the page and try again.', current) }
    const vendor = vendorOf(String(event.context.params?.platform ?? ''))
    if (!vendor) return { answer: problem(event, 404, 'No such platform.', current) }
    return { current, form: read.form, vendor }
  }
  const siteChecks = (event: H3Event, current: Current, vendor: ConnectVendor, siteId: string) => {
    if (!mayEditSite(current, siteId)) return { answer: problem(event, 403, 'You may not change the connections of this site.', current) }
    const vctx = vendorContext(vendor, siteId)
    if (!vctx) return { answer: problem(event, 404, `No OAuth app is configured for ${vendor.label} (oauth.${vendor.platform} in the config file).`, current) }
    return { vctx }
  }
  /** openPost and siteChecks for a form naming its `site` (Connect, Disconnect, Meta's token). */
  const openSitePost = async (event: H3Event) => {
    const opened = await openPost(event)
    if (!opened.vendor) return { answer: opened.answer }
    const siteId = opened.form.get('site') ?? ''
    const checked = siteChecks(event, opened.current, opened.vendor, siteId)
    if (!checked.vctx) return { answer: checked.answer }
    return { ...opened, siteId, vctx: checked.vctx }
  }
  const setup = (siteId: string) => `/dashboard/sites/${encodeURIComponent(siteId)}/setup`
  const flash = (current: Current, text: string, kind?: 'error') => sessions.save(current.key, { ...current.session, flash: { text, ...(kind ? { kind } : {}) } })
  const vendorFailure = (event: H3Event, error: unknown, current?: Current) => {
    if (error instanceof VendorError || error instanceof PickProblem) return problem(event, 502, error.message, current)
    throw error
  }

  return { flows, page, problem, vendorContext, mayEditSite, openPost, openSitePost, siteChecks, setup, flash, vendorFailure }
}

export type ConnectHelpers = ReturnType<typeof connectHelpers>

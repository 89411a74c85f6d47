import * as v from 'valibot'
import type { H3Event } from 'h3'
import { callHookSafe } from '../../../core/hooks.ts'
import { PickProblem, VendorError } from '../../../core/connect/errors.ts'
import { createFlows } from '../../../core/connect/flows.ts'
import { timedFetch } from '../../../core/connect/http.ts'
import type { ConnectVendor, VendorContext } from '../../../core/connect/types.ts'
import { appOf, vendorOf } from '../../../core/connect/vendors.ts'
import { mayView } from '../access.ts'
import { sameSecret } from '../csrf.ts'
import { layout, type Html } from '../html.ts'
import { continueView, pickForm } from '../pages/connect-views.ts'
import { readForm, readQuery, redirect, sendPage, sendProblem } from '../respond.ts'
import type { Dashboard } from '../service.ts'
import type { Session } from '../session.ts'

const tags = ['Dashboard']
type Current = { key: string, session: Session }

/**
 * The Connect buttons (core/connect/README.md): POST …/<platform>/start sends the browser to the vendor with a state
 * bound to this session (single use, 10 minutes) and PKCE where the vendor takes it; GET …/callback exchanges the code
 * and holds the grant sealed; GET/POST …/pick lists what the account holds and, once picked, calls
 * `dashboard:destination-connected` with the adapter's options; POST …/disconnect revokes where the vendor offers it
 * and calls `dashboard:destination-disconnected`. Meta takes a pasted token at POST /dashboard/oauth/meta/token.
 */
export function addConnectRoutes(dashboard: Dashboard): void {
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
  const mayEdit = (current: Current, siteId: string) => {
    const site = ctx.sites.byId(siteId)
    const { viewer } = current.session
    const membersMayEdit = (dashboard.options as { membersMayEdit?: boolean }).membersMayEdit === true
    return !!site && mayView(viewer, site) && (viewer.kind === 'operator' || membersMayEdit)
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
    if (!mayEdit(current, siteId)) return { answer: problem(event, 403, 'You may not change the connections of this site.', current) }
    const vctx = vendorContext(vendor, siteId)
    if (!vctx) return { answer: problem(event, 404, `No OAuth app is configured for ${vendor.label} (oauth.${vendor.platform} in the config file).`, current) }
    return { vctx }
  }
  const setup = (siteId: string) => `/dashboard/sites/${encodeURIComponent(siteId)}/setup`
  const flash = (current: Current, text: string, kind?: 'error') => sessions.save(current.key, { ...current.session, flash: { text, ...(kind ? { kind } : {}) } })
  const vendorFailure = (event: H3Event, error: unknown, current?: Current) => {
    if (error instanceof VendorError || error instanceof PickProblem) return problem(event, 502, error.message, current)
    throw error
  }

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/:platform/start', auth: 'none', tags, summary: 'Connect: send the browser to the vendor\'s consent page',
    handler: async (event) => {
      const opened = await openPost(event)
      if (!opened.vendor) return opened.answer
      const { current, form, vendor } = opened
      const siteId = form.get('site') ?? ''
      const checked = siteChecks(event, current, vendor, siteId)
      if (!checked.vctx) return checked.answer
      if (vendor.platform === 'meta') return problem(event, 400, 'Meta connects with a pasted system-user token.', current)
      const { state, challenge } = await flows.begin({ sessionKey: current.key, siteId, platform: vendor.platform, pkce: vendor.pkce })
      event.res.status = 303
      event.res.headers.set('location', vendor.authorizeUrl(checked.vctx.app, state, challenge))
      event.res.headers.set('cache-control', 'no-store')
      event.res.headers.set('referrer-policy', 'no-referrer')
      return null
    },
  })

  ctx.routes.add({
    method: 'GET', path: '/dashboard/oauth/:platform/callback', auth: 'none', tags, summary: 'Connect: the vendor\'s redirect back with a code (or an error)',
    handler: async (event) => {
      const query = readQuery(event)
      const vendor = vendorOf(String(event.context.params?.platform ?? ''))
      if (!query || !vendor) return problem(event, 400, 'This address is not one dcgate sent you to.')
      // The session cookie (SameSite=Strict) is not sent on the vendor's redirect: the state says whose flow it is.
      const pending = await flows.take(query.get('state') ?? '', vendor.platform)
      if (!pending) return problem(event, 400, 'This sign-in was already used or has expired. Start again with the Connect button on the site\'s Setup page.')
      const vendorError = query.get('error')
      if (vendorError) {
        const description = query.get('error_description')?.slice(0, 300)
        return problem(event, 400, `${vendor.label} did not grant access: ${vendorError}${description ? ` (${description})` : ''}. Start again with the Connect button.`)
      }
      const vctx = vendorContext(vendor, pending.siteId)
      if (!vctx) return problem(event, 404, `No OAuth app is configured for ${vendor.label}.`)
      const code = query.get('code') ?? query.get('auth_code') ?? ''
      if (!code) return problem(event, 400, `${vendor.label} sent no authorization code.`)
      try {
        const grant = await vendor.exchange(vctx, code, pending.verifier)
        const flow = await flows.hold(pending, grant)
        const href = `/dashboard/oauth/${vendor.platform}/pick?flow=${flow}`
        return page(event, 200, `Connect ${vendor.label}`, continueView(href))
      }
      catch (error) {
        return vendorFailure(event, error)
      }
    },
  })

  ctx.routes.add({
    method: 'GET', path: '/dashboard/oauth/:platform/pick', auth: 'none', tags, summary: 'Connect: pick what the account holds',
    handler: async (event) => {
      const current = await sessions.read(event)
      if (!current) return redirect(event, '/dashboard')
      const vendor = vendorOf(String(event.context.params?.platform ?? ''))
      const flow = readQuery(event)?.get('flow') ?? ''
      const held = vendor && await flows.held(flow, current.key, vendor.platform)
      if (!vendor || !held) return problem(event, 404, 'This connection was finished, has expired, or was started in another session. Start again with the Connect button.', current)
      const vctx = vendorContext(vendor, held.siteId)
      if (!vctx || !mayEdit(current, held.siteId)) return problem(event, 403, 'You may not change the connections of this site.', current)
      try {
        const fields = await vendor.list(vctx, held.grant)
        const siteName = ctx.sites.byId(held.siteId)?.config.name ?? held.siteId
        return page(event, 200, `Connect ${vendor.label}`, pickForm({ platform: vendor.platform, label: vendor.label, flow, csrf: current.session.csrf, fields, siteName }), current)
      }
      catch (error) {
        return vendorFailure(event, error, current)
      }
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/:platform/pick', auth: 'none', tags, summary: 'Connect: the owner\'s pick, handed to the site',
    handler: async (event) => {
      const opened = await openPost(event)
      if (!opened.vendor) return opened.answer
      const { current, form, vendor } = opened
      const flow = form.get('flow') ?? ''
      const held = await flows.held(flow, current.key, vendor.platform)
      if (!held) return problem(event, 404, 'This connection was finished, has expired, or was started in another session. Start again with the Connect button.', current)
      const checked = siteChecks(event, current, vendor, held.siteId)
      if (!checked.vctx) return checked.answer
      let options: Record<string, unknown>
      try {
        options = await vendor.toOptions(checked.vctx, held.grant, form)
      }
      catch (error) {
        if (error instanceof PickProblem) return problem(event, 400, error.message, current)
        return vendorFailure(event, error, current)
      }
      const definition = ctx.registry.get(vendor.kind, vendor.adapter)
      const valid = definition ? v.safeParse(definition.options, options) : undefined
      if (!valid?.success) return problem(event, 400, `These picks do not make valid ${vendor.label} options: ${valid?.issues.map((issue) => issue.message).join('; ') ?? 'no such adapter'}.`, current)
      const actor = current.session.viewer.label
      await callHookSafe(ctx.hooks, ctx.logger, 'dashboard:destination-connected', { siteId: held.siteId, platform: vendor.adapter, options, actor })
      await flows.finish(flow)
      await dashboard.audit(current.session.viewer, held.siteId, 'connected platform', vendor.adapter)
      await flash(current, `${vendor.label} is connected.`)
      return redirect(event, setup(held.siteId))
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/:platform/disconnect', auth: 'none', tags, summary: 'Disconnect: revoke where the vendor offers it, remove from the site',
    handler: async (event) => {
      const opened = await openPost(event)
      if (!opened.vendor) return opened.answer
      const { current, form, vendor } = opened
      const siteId = form.get('site') ?? ''
      const checked = siteChecks(event, current, vendor, siteId)
      if (!checked.vctx) return checked.answer
      const configured = ctx.registry.forSite(siteId, vendor.kind).find((c) => c.definition.name === vendor.adapter)
      let revoked = 'nothing to revoke'
      if (configured && vendor.revoke) {
        try {
          await vendor.revoke(checked.vctx, configured.options as Record<string, unknown>)
          revoked = 'access revoked'
        }
        catch (error) {
          if (!(error instanceof VendorError)) throw error
          revoked = `revoking failed: ${error.message}`
        }
      }
      const actor = current.session.viewer.label
      await callHookSafe(ctx.hooks, ctx.logger, 'dashboard:destination-disconnected', { siteId, platform: vendor.adapter, actor })
      await dashboard.audit(current.session.viewer, siteId, 'disconnected platform', `${vendor.adapter}: ${revoked}`)
      await flash(current, `${vendor.label} is disconnected (${revoked}).`, revoked.startsWith('revoking failed') ? 'error' : undefined)
      return redirect(event, setup(siteId))
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/meta/token', auth: 'none', tags, summary: 'Connect Meta: a pasted system-user token, checked at once',
    handler: async (event) => {
      const opened = await openPost(event)
      if (!opened.vendor) return opened.answer
      const { current, form, vendor } = opened
      const siteId = form.get('site') ?? ''
      const checked = siteChecks(event, current, vendor, siteId)
      if (!checked.vctx) return checked.answer
      const token = form.get('accessToken')?.trim() ?? ''
      if (!/^[\w|-]{20,1000}$/.test(token)) return problem(event, 400, 'Paste the whole system-user access token (Business Settings → System users → Generate new token).', current)
      try {
        const grant = await vendor.exchange(checked.vctx, token, undefined)
        const flow = await flows.hold({ sessionKey: current.key, siteId, platform: vendor.platform }, grant)
        return redirect(event, `/dashboard/oauth/meta/pick?flow=${flow}`)
      }
      catch (error) {
        return vendorFailure(event, error, current)
      }
    },
  })
}

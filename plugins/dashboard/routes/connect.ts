import * as v from 'valibot'
import { PickProblem } from '../connect/errors.ts'
import { vendorOf } from '../connect/vendors.ts'
import { continueView, pickForm } from '../pages/connect-views.ts'
import { readQuery, redirect } from '../respond.ts'
import type { Dashboard } from '../service.ts'
import { connectHelpers } from './connect-helpers.ts'
import { addConnectManageRoutes } from './connect-manage.ts'

const tags = ['Dashboard']

/**
 * The Connect buttons (plugins/dashboard/connect/README.md): POST …/<platform>/start sends the browser to the vendor with a state
 * bound to this session (single use, 10 minutes) and PKCE where the vendor takes it; GET …/callback exchanges the code
 * and holds the grant sealed; GET/POST …/pick lists what the account holds and, once picked, calls
 * `dashboard:destination-connected` with the adapter's options; POST …/disconnect revokes where the vendor offers it
 * and calls `dashboard:destination-disconnected`. Meta takes a pasted token at POST /dashboard/oauth/meta/token.
 */
export function addConnectRoutes(dashboard: Dashboard): void {
  const { ctx, sessions } = dashboard
  const helpers = connectHelpers(dashboard)
  const { flows, page, problem, vendorContext, mayEditSite, openPost, openSitePost, siteChecks, setup, flash, vendorFailure } = helpers

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/:platform/start', auth: 'none', tags, summary: 'Connect: send the browser to the vendor\'s consent page',
    handler: async (event) => {
      const opened = await openSitePost(event)
      if (!('vctx' in opened)) return opened.answer
      const { current, vendor, siteId, vctx } = opened
      if (vendor.platform === 'meta') return problem(event, 400, 'Meta connects with a pasted system-user token.', current)
      const { state, challenge } = await flows.begin({ sessionKey: current.key, siteId, platform: vendor.platform, pkce: vendor.pkce })
      event.res.status = 303
      event.res.headers.set('location', vendor.authorizeUrl(vctx.app, state, challenge))
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
      if (!vctx || !mayEditSite(current, held.siteId)) return problem(event, 403, 'You may not change the connections of this site.', current)
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
      const { vctx } = checked
      let options: Record<string, unknown>
      try {
        options = await vendor.toOptions(vctx, held.grant, form)
      }
      catch (error) {
        if (error instanceof PickProblem) return problem(event, 400, error.message, current)
        return vendorFailure(event, error, current)
      }
      const definition = ctx.registry.get(vendor.kind, vendor.adapter)
      const valid = definition ? v.safeParse(definition.options, options) : undefined
      if (!valid?.success) return problem(event, 400, `These picks do not make valid ${vendor.label} options: ${valid?.issues.map((issue) => issue.message).join('; ') ?? 'no such adapter'}.`, current)
      const actor = current.session.viewer.label
      try {
        // callHook, not callHookSafe: the owner must learn when the listener could not store the connection.
        await ctx.hooks.callHook('dashboard:destination-connected', { siteId: held.siteId, platform: vendor.adapter, options, actor })
      }
      catch (error) {
        ctx.report(error, { source: 'hook:dashboard:destination-connected' })
        return problem(event, 503, `${vendor.label} could not be saved to the site just now. Go back and press Connect on this page again.`, current)
      }
      await flows.finish(flow)
      await dashboard.audit(current.session.viewer, held.siteId, 'connected platform', vendor.adapter)
      await flash(current, `${vendor.label} is connected.`)
      return redirect(event, setup(held.siteId))
    },
  })

  addConnectManageRoutes(dashboard, helpers)
}

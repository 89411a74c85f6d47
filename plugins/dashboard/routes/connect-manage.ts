import type { Dashboard } from '../service.ts'
import { VendorError } from '../connect/errors.ts'
import { redirect } from '../respond.ts'
import type { ConnectHelpers } from './connect-helpers.ts'

const tags = ['Dashboard']

/** Disconnect (revoke where the vendor offers it, then the hook) and Meta's pasted token (routes/connect.ts). */
export function addConnectManageRoutes(dashboard: Dashboard, helpers: ConnectHelpers): void {
  const { ctx } = dashboard
  const { flows, problem, openSitePost, setup, flash, vendorFailure } = helpers

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/:platform/disconnect', auth: 'none', tags, summary: 'Disconnect: revoke where the vendor offers it, remove from the site',
    handler: async (event) => {
      const opened = await openSitePost(event)
      if (!('vctx' in opened)) return opened.answer
      const { current, vendor, siteId, vctx } = opened
      const configured = ctx.registry.forSite(siteId, vendor.kind).find((c) => c.definition.name === vendor.adapter)
      let revoked = 'nothing to revoke'
      if (configured && vendor.revoke) {
        try {
          await vendor.revoke(vctx, configured.options as Record<string, unknown>)
          revoked = 'access revoked'
        }
        catch (error) {
          if (!(error instanceof VendorError)) throw error
          revoked = `revoking failed: ${error.message}`
        }
      }
      const actor = current.session.viewer.label
      try {
        await ctx.hooks.callHook('dashboard:destination-disconnected', { siteId, platform: vendor.adapter, actor })
      }
      catch (error) {
        ctx.report(error, { source: 'hook:dashboard:destination-disconnected' })
        return problem(event, 503, `${vendor.label} could not be removed from the site just now (${revoked}). Try again.`, current)
      }
      await dashboard.audit(current.session.viewer, siteId, 'disconnected platform', `${vendor.adapter}: ${revoked}`)
      await flash(current, `${vendor.label} is disconnected (${revoked}).`, revoked.startsWith('revoking failed') ? 'error' : undefined)
      return redirect(event, setup(siteId))
    },
  })

  ctx.routes.add({
    method: 'POST', path: '/dashboard/oauth/meta/token', auth: 'none', tags, summary: 'Connect Meta: a pasted system-user token, checked at once',
    handler: async (event) => {
      const opened = await openSitePost(event)
      if (!('vctx' in opened)) return opened.answer
      const { current, form, vendor, siteId, vctx } = opened
      const token = form.get('accessToken')?.trim() ?? ''
      if (!/^[\w|-]{20,1000}$/.test(token)) return problem(event, 400, 'Paste the whole system-user access token (Business Settings → System users → Generate new token).', current)
      try {
        const grant = await vendor.exchange(vctx, token, undefined)
        const flow = await flows.hold({ sessionKey: current.key, siteId, platform: vendor.platform }, grant)
        return redirect(event, `/dashboard/oauth/meta/pick?flow=${flow}`)
      }
      catch (error) {
        return vendorFailure(event, error, current)
      }
    },
  })
}

import type { PluginContext } from '../../../core/plugin.ts'
import { originAllowed } from '../request.ts'

/**
 * CORS preflight for the capture routes. The script sends text/plain (no preflight); a site posting JSON from
 * its own code gets one. Allowed for the site's domains only.
 */
export function addPreflightRoutes(ctx: PluginContext): void {
  for (const path of ['/collect', '/identify', '/collect/worker', '/identify/worker']) {
    ctx.app.options(path, (event) => {
      const copKey = event.url.searchParams.get('cop_key')
      const site = copKey ? ctx.sites.byCopKey(copKey) : undefined
      const origin = event.req.headers.get('origin')
      event.res.headers.set('vary', 'Origin')
      if (!site || !origin || !originAllowed(origin, site)) {
        event.res.status = 403
        return null
      }
      event.res.headers.set('access-control-allow-origin', origin)
      event.res.headers.set('access-control-allow-credentials', 'true')
      event.res.headers.set('access-control-allow-methods', 'POST')
      event.res.headers.set('access-control-allow-headers', 'content-type')
      event.res.headers.set('access-control-max-age', '86400')
      event.res.status = 204
      return null
    })
  }
}

import type { PluginContext } from '../../../core/plugin.ts'
import { corsHeaders } from '../request.ts'
import { captureOriginVerdict } from './common.ts'

/**
 * CORS preflight for the capture routes. The script sends text/plain (no preflight); a site posting JSON from
 * its own code gets one. Allowed for the origins the POST itself takes, with credentials only where it gives them.
 */
export function addPreflightRoutes(ctx: PluginContext): void {
  for (const path of ['/collect', '/identify', '/collect/worker', '/identify/worker']) {
    ctx.app.options(path, (event) => {
      const copKey = event.url.searchParams.get('cop_key')
      const site = copKey ? ctx.sites.byCopKey(copKey) : undefined
      const origin = event.req.headers.get('origin')
      const verdict = site && origin ? captureOriginVerdict(ctx, origin, site) : 'refused'
      event.res.headers.set('vary', 'Origin')
      if (verdict === 'refused') {
        event.res.status = 403
        return null
      }
      for (const [name, value] of corsHeaders(origin, verdict)) if (name !== 'vary') event.res.headers.set(name, value)
      event.res.headers.set('access-control-allow-methods', 'POST')
      event.res.headers.set('access-control-allow-headers', 'content-type')
      event.res.headers.set('access-control-max-age', '86400')
      event.res.status = 204
      return null
    })
  }
}

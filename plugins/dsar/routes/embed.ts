import { readFileSync } from 'node:fs'
import type { PluginContext } from '../../../core/plugin.ts'

const SOURCE = readFileSync(new URL('../client/embed.js', import.meta.url), 'utf8')

/** GET /dsar-embed.js: the drop-in deletion form (plugins/dsar/client/embed.js), the same for every site. */
export function addEmbedRoute(ctx: PluginContext): void {
  ctx.routes.add({
    method: 'GET',
    path: '/dsar-embed.js',
    auth: 'none',
    summary: 'The drop-in deletion form',
    description: '<script src="{cdn_url}/dsar-embed.js" data-cop-key="…"></script> renders an email box where the tag sits and posts to /public/data-deletion/request.',
    tags: ['Data deletion'],
    handler: (event) => {
      event.res.headers.set('content-type', 'application/javascript; charset=utf-8')
      event.res.headers.set('cache-control', 'public, max-age=3600')
      event.res.headers.set('access-control-allow-origin', '*')
      return SOURCE
    },
  })
}

import { readFileSync } from 'node:fs'
import type { PluginContext } from '../../../core/plugin.ts'

/** The stylesheet and the small script every page loads: files, so the CSP needs no inline code. */
const ASSETS = {
  'dashboard.css': 'text/css; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
} as const

export function addAssetRoutes(ctx: PluginContext): void {
  for (const [file, type] of Object.entries(ASSETS)) {
    const body = readFileSync(new URL(`../assets/${file}`, import.meta.url), 'utf8')
    ctx.routes.add({
      method: 'GET', path: `/dashboard/assets/${file}`, auth: 'none', tags: ['Dashboard'],
      summary: `The dashboard's ${file.endsWith('.css') ? 'stylesheet' : 'script'}`,
      handler: (event) => {
        event.res.headers.set('content-type', type)
        event.res.headers.set('cache-control', 'public, max-age=300')
        event.res.headers.set('x-content-type-options', 'nosniff')
        return body
      },
    })
  }
}

import type { H3Event } from 'h3'
import * as v from 'valibot'
import type { PluginContext } from '../../../core/plugin.ts'
import { CHUNKS, renderChunk, renderScript, type ChunkName, type RenderedScript } from '../script.ts'

/** A day in caches and browsers, then a week of serving the stale copy while revalidating by ETag. */
const CACHE_CONTROL = 'public, max-age=86400, stale-while-revalidate=604800'
const JS = 'application/javascript; charset=utf-8'

/** GET /script?cop_key=: the tracking script with the site's settings; 404 as a JS comment for an unknown key. */
export function addScriptRoute(ctx: PluginContext): void {
  ctx.routes.add({
    method: 'GET',
    path: '/script',
    auth: 'none',
    summary: 'The tracking script for a site',
    description: 'Cached a day (ETag revalidation), gzip or brotli. An unknown cop_key answers 404 with a JavaScript comment.',
    tags: ['Capture'],
    query: v.looseObject({ cop_key: v.optional(v.string()) }),
    handler: async (event, { query }) => {
      event.res.headers.set('content-type', JS)
      const site = query.cop_key ? ctx.sites.byCopKey(query.cop_key) : undefined
      if (!site) {
        event.res.status = 404
        event.res.headers.set('cache-control', 'no-store')
        return `/* dcgate: ${query.cop_key ? 'unknown cop_key' : 'cop_key is required'}; check the script tag's src */\n`
      }
      const script = await renderScript({ forms: site.config.capture.forms, banner: site.config.consent.banner, bannerText: site.config.consent.text, consentSource: site.config.consent.source })
      return serveScript(event, script)
    },
  })
  for (const name of Object.keys(CHUNKS) as ChunkName[]) {
    ctx.routes.add({
      method: 'GET',
      path: `/script/${name}`,
      auth: 'none',
      summary: `The tracking script's ${CHUNK_SUMMARIES[name]}`,
      description: 'A part of the tracking script it loads only when needed. The same for every site; cached like the script.',
      tags: ['Capture'],
      handler: async (event) => {
        event.res.headers.set('content-type', JS)
        return serveScript(event, await renderChunk(name))
      },
    })
  }
}

const CHUNK_SUMMARIES: Record<ChunkName, string> = {
  cmp: 'consent tool reader (IAB TCF, Google Consent Mode, IAB GPP), loaded when the page has one',
  banner: 'consent banner, loaded when a visitor must be asked',
}

/** A rendered script with its cache headers: 304 for a matching ETag, else the best encoding the client takes. */
function serveScript(event: H3Event, script: RenderedScript): string | Uint8Array | null {
  event.res.headers.set('cache-control', CACHE_CONTROL)
  event.res.headers.set('etag', script.etag)
  event.res.headers.set('vary', 'Accept-Encoding')
  if (matchesEtag(event, script.etag)) {
    event.res.status = 304
    return null
  }
  const encoding = pickEncoding(event)
  if (encoding) event.res.headers.set('content-encoding', encoding)
  return encoding === 'br' ? new Uint8Array(script.brotli) : encoding === 'gzip' ? new Uint8Array(script.gzip) : script.body
}

function matchesEtag(event: H3Event, etag: string): boolean {
  const header = event.req.headers.get('if-none-match')
  return Boolean(header && header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag))
}

function pickEncoding(event: H3Event): 'br' | 'gzip' | undefined {
  const accepted = (event.req.headers.get('accept-encoding') ?? '').toLowerCase()
  if (/\bbr\b/.test(accepted)) return 'br'
  if (/\bgzip\b/.test(accepted)) return 'gzip'
  return undefined
}

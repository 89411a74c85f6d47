import type { H3Event } from 'h3'
import * as v from 'valibot'
import type { PluginContext } from '../../../core/plugin.ts'
import type { ActiveSite } from '../../../core/sites/directory.ts'
import { CHUNKS, renderChunk, renderScript, type ChunkName, type RenderedScript, type ScriptSettings } from '../script.ts'

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
      if (!site) return unknownKey(event, query.cop_key)
      return serveScript(event, await renderScript(scriptSettings(site)))
    },
  })
  for (const name of Object.keys(CHUNKS) as ChunkName[]) {
    ctx.routes.add({
      method: 'GET',
      path: `/script/${name}`,
      auth: 'none',
      summary: `The tracking script's ${CHUNK_SUMMARIES[name]}`,
      description: 'A part of the tracking script it loads only when needed, with the cop_key of the script (banner and forms carry the site\'s words and forms; without a cop_key, none). Cached like the script.',
      tags: ['Capture'],
      query: v.looseObject({ cop_key: v.optional(v.string()) }),
      handler: async (event, { query }) => {
        event.res.headers.set('content-type', JS)
        // Without a key (asked by a script rendered before chunks took one): the chunk without site data.
        if (query.cop_key === undefined) return serveScript(event, await renderChunk(name))
        const site = ctx.sites.byCopKey(query.cop_key)
        if (!site) return unknownKey(event, query.cop_key)
        return serveScript(event, await renderChunk(name, scriptSettings(site)))
      },
    })
  }
}

function scriptSettings(site: ActiveSite): ScriptSettings {
  return { forms: site.config.capture.forms, banner: site.config.consent.banner, bannerText: site.config.consent.text, consentSource: site.config.consent.source }
}

/** 404 as a JavaScript comment, never cached: the tag's src is wrong. */
function unknownKey(event: H3Event, copKey: string | undefined): string {
  event.res.status = 404
  event.res.headers.set('cache-control', 'no-store')
  return `/* dcgate: ${copKey ? 'unknown cop_key' : 'cop_key is required'}; check the script tag's src */\n`
}

const CHUNK_SUMMARIES: Record<ChunkName, string> = {
  cmp: 'consent tool reader (IAB TCF, Google Consent Mode, IAB GPP), loaded when the page has one',
  banner: 'consent banner with the site\'s words, loaded when a visitor must be asked',
  forms: 'mapped forms reader with the site\'s forms, loaded on a site that maps forms once identifiers are allowed',
  ids: 'click id keeping, identifyUser cleaning and device fingerprint, loaded once identifiers are allowed',
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

/** br, else gzip, of those the client takes (a `q=0` refuses one; `*` takes any); none: the plain body. */
function pickEncoding(event: H3Event): 'br' | 'gzip' | undefined {
  const weights = new Map<string, number>()
  for (const part of (event.req.headers.get('accept-encoding') ?? '').toLowerCase().split(',')) {
    const [name = '', ...params] = part.split(';').map((piece) => piece.trim())
    const q = params.find((param) => param.startsWith('q='))
    weights.set(name, q ? Number(q.slice(2)) || 0 : 1)
  }
  return (['br', 'gzip'] as const).find((encoding) => (weights.get(encoding) ?? weights.get('*') ?? 0) > 0)
}

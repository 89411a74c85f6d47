/**
 * Builds and renders the browser tracking script (source: ./client). The bundle is built once per process with
 * esbuild, loaded for that build only: its service (a child process of its own) is stopped once the bundle is made.
 * Each site's script is that bundle with its settings injected, precompressed, with a strong ETag.
 * Host and cop_key are not injected: the script reads them from its own tag, so one render serves every site
 * with the same settings.
 */
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import type { ClientSettings } from './protocol.ts'

export type ScriptSettings = Pick<ClientSettings, 'forms' | 'banner' | 'bannerText' | 'consentSource'>

export interface RenderedScript {
  body: string
  /** Strong ETag (quoted): a hash of the body. */
  etag: string
  gzip: Buffer
  brotli: Buffer
}

/** The free identifier the client reads its settings from (client/settings.ts). */
export const SETTINGS_PLACEHOLDER = '__DC_SETTINGS__'

const ENTRY = fileURLToPath(new URL('./client/index.ts', import.meta.url))
/** Chunks the script loads only when needed: the consent tool reader and the built-in banner. */
export const CHUNKS = {
  cmp: fileURLToPath(new URL('./client/cmp.ts', import.meta.url)),
  banner: fileURLToPath(new URL('./client/banner-chunk.ts', import.meta.url)),
} as const
export type ChunkName = keyof typeof CHUNKS
/** Renders are few (one per distinct settings); the cap only guards against a config reloaded many times. */
const MAX_RENDERS = 500

let bundle: Promise<string> | undefined
const renders = new Map<string, Promise<RenderedScript>>()

/** Builds in flight: esbuild's service process (about 14 MB) is stopped once none is, and restarts on the next build. */
let building = 0

/** The minified IIFE of an entry, built in memory. */
async function buildEntry(entry: string): Promise<string> {
  const esbuild = await import('esbuild')
  building++
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2019',
    legalComments: 'none',
    logLevel: 'silent',
  }).finally(() => {
    if (--building === 0) void esbuild.stop()
  })
  return result.outputFiles[0]?.text ?? ''
}

const chunks = new Map<ChunkName, Promise<RenderedScript>>()

/** GET /script/<chunk>: the same for every site (the banner's words come from the script), built once per process. */
export function renderChunk(name: ChunkName): Promise<RenderedScript> {
  let rendered = chunks.get(name)
  if (!rendered) {
    rendered = buildEntry(CHUNKS[name]).then(toRendered)
    rendered.catch(() => chunks.delete(name))
    chunks.set(name, rendered)
  }
  return rendered
}

/** The minified IIFE of client/index.ts, built in memory once per process (a failed build is retried next call). */
export function buildClientBundle(): Promise<string> {
  bundle ??= buildEntry(ENTRY).then((code) => {
    const placeholders = code.split(SETTINGS_PLACEHOLDER).length - 1
    if (placeholders !== 1) throw new Error(`The tracking script bundle must read ${SETTINGS_PLACEHOLDER} exactly once; it does ${placeholders} times (see plugins/capture/client/settings.ts)`)
    return code
  }).catch((error: unknown) => {
    bundle = undefined
    throw error
  })
  return bundle
}

/** The script for one site's settings: body, strong ETag and gzip/brotli forms, memoised per settings. */
export function renderScript(settings: ScriptSettings): Promise<RenderedScript> {
  // Only the client settings, in a fixed key order, so equal settings share one render and one ETag.
  const json = JSON.stringify({
    forms: settings.forms.map((form) => ({ selector: form.selector, emailField: form.emailField, phoneField: form.phoneField, firstNameField: form.firstNameField, lastNameField: form.lastNameField })),
    banner: settings.banner,
    ...(settings.bannerText ? { bannerText: Object.fromEntries(Object.entries(settings.bannerText).map(([lang, t]) => [lang, { message: t.message, accept: t.accept, reject: t.reject }])) } : {}),
    ...(settings.consentSource && settings.consentSource !== 'auto' ? { consentSource: settings.consentSource } : {}),
  })
  let rendered = renders.get(json)
  if (!rendered) {
    if (renders.size >= MAX_RENDERS) renders.clear()
    rendered = buildClientBundle().then((code) => toRendered(code.replace(SETTINGS_PLACEHOLDER, () => `(${json})`)))
    rendered.catch(() => renders.delete(json))
    renders.set(json, rendered)
  }
  return rendered
}

function toRendered(body: string): RenderedScript {
  const bytes = Buffer.from(body)
  return {
    body,
    etag: `"${createHash('sha256').update(bytes).digest('base64url')}"`,
    gzip: gzipSync(bytes, { level: 9 }),
    brotli: brotliCompressSync(bytes, {
      params: { [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }),
  }
}

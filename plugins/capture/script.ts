/**
 * Builds and renders the browser tracking script (source: ./client) and its chunks. Each bundle is built once per
 * process with esbuild, loaded for that build only: its service (a child process of its own) is stopped once the
 * bundles are made. Each site's script (and a chunk carrying site data) is that bundle with its settings injected,
 * precompressed once (gzip 9, brotli 11), with a strong ETag.
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
const entry = (file: string): string => fileURLToPath(new URL(`./client/${file}`, import.meta.url))
/**
 * Chunks the script loads only when needed: the consent tool reader, the built-in banner with the site's words, and,
 * once identifiers are allowed, click id keeping, identifyUser's cleaning and the device fingerprint, and the mapped forms
 * with the site's forms.
 */
export const CHUNKS = {
  cmp: entry('cmp.ts'),
  banner: entry('banner-chunk.ts'),
  forms: entry('forms-chunk.ts'),
  ids: entry('ids-chunk.ts'),
} as const
export type ChunkName = keyof typeof CHUNKS
/** The site data each chunk carries (renderChunk injects it as the main script's settings are); none: the same for every site. */
const CHUNK_DATA: Partial<Record<ChunkName, (settings: ScriptSettings) => object>> = {
  banner: (settings) => settings.bannerText ? { bannerText: Object.fromEntries(Object.entries(settings.bannerText).map(([lang, t]) => [lang, { message: t.message, accept: t.accept, reject: t.reject }])) } : {},
  forms: (settings) => ({ forms: settings.forms.map((form) => ({ selector: form.selector, emailField: form.emailField, phoneField: form.phoneField, firstNameField: form.firstNameField, lastNameField: form.lastNameField })) }),
}
/** Renders are few (one per distinct settings); the cap only guards against a config reloaded many times. */
const MAX_RENDERS = 500

const bundles = new Map<string, Promise<string>>()
const renders = new Map<string, Promise<RenderedScript>>()

/** Builds in flight: esbuild's service process (about 14 MB) is stopped once none is, and restarts on the next build. */
let building = 0

/**
 * The minified IIFE of an entry, built in memory. Beyond esbuild's minify: the internal properties named with a
 * trailing `_` (never a wire field, a browser API or a setting) are mangled to short names.
 */
async function buildEntry(file: string): Promise<string> {
  const esbuild = await import('esbuild')
  building++
  const result = await esbuild.build({
    entryPoints: [file],
    bundle: true,
    write: false,
    minify: true,
    mangleProps: /_$/,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    legalComments: 'none',
    logLevel: 'silent',
  }).finally(() => {
    if (--building === 0) void esbuild.stop()
  })
  return result.outputFiles[0]?.text ?? ''
}

/** An entry's bundle, built once per process (a failed build is retried next call); `settings`: it reads the placeholder once. */
function bundleOf(file: string, settings: boolean): Promise<string> {
  let bundle = bundles.get(file)
  if (!bundle) {
    bundle = buildEntry(file).then((code) => {
      const placeholders = code.split(SETTINGS_PLACEHOLDER).length - 1
      if (placeholders !== (settings ? 1 : 0)) throw new Error(`The tracking script bundle ${file} must read ${SETTINGS_PLACEHOLDER} ${settings ? 'exactly once' : 'never'}; it does ${placeholders} times (see plugins/capture/client/settings.ts)`)
      return code
    })
    bundle.catch(() => bundles.delete(file))
    bundles.set(file, bundle)
  }
  return bundle
}

/** The minified IIFE of client/index.ts, built in memory once per process. */
export function buildClientBundle(): Promise<string> {
  return bundleOf(ENTRY, true)
}

/** A bundle with `data` injected (when it reads settings), memoised with its compressed forms. */
function render(file: string, data: object | undefined): Promise<RenderedScript> {
  const json = data && JSON.stringify(data)
  const key = `${file}\n${json ?? ''}`
  let rendered = renders.get(key)
  if (!rendered) {
    if (renders.size >= MAX_RENDERS) renders.clear()
    rendered = bundleOf(file, json !== undefined).then((code) => toRendered(json === undefined ? code : code.replace(SETTINGS_PLACEHOLDER, () => `(${json})`)))
    rendered.catch(() => renders.delete(key))
    renders.set(key, rendered)
  }
  return rendered
}

/**
 * GET /script/<chunk>: cmp and ids are the same for every site; banner and forms carry the site's words and forms
 * (none without a site: the built-in English, no form).
 */
export function renderChunk(name: ChunkName, settings: ScriptSettings = { forms: [], banner: 'eu' }): Promise<RenderedScript> {
  return render(CHUNKS[name], CHUNK_DATA[name]?.(settings))
}

/**
 * The main script for one site's settings, memoised per settings. Only what every page needs, in a fixed key order
 * so equal settings share one render and one ETag: the banner rule, the consent source, whether forms are mapped.
 */
export function renderScript(settings: ScriptSettings): Promise<RenderedScript> {
  return render(ENTRY, {
    banner: settings.banner,
    ...(settings.consentSource && settings.consentSource !== 'auto' ? { consentSource: settings.consentSource } : {}),
    ...(settings.forms.length ? { forms: 1 } : {}),
  })
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

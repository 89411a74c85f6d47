// The tracking script's parts as served (raw, gzip, brotli: the bytes GET /script and GET /script/<chunk> answer
// with for each Accept-Encoding), beside the same parts built from a base ref's sources in the same run (issue 30).
// Run: npm run bench:script-size (about 10 s). BENCH_BASE_REF picks the base (default main); the base's sources are
// taken with `git archive` into a temporary directory and built there with this checkout's esbuild.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ScriptSettings } from '../../plugins/capture/script.ts'
import { ROOT } from './support.ts'

const BASE_REF = process.env.BENCH_BASE_REF ?? 'main'
/** The budget of issue 30: the main part, gzip, for a visitor who needs no banner and no form code. */
const MAIN_GZIP_BUDGET = 4096
/** The sources a script build reads (the client imports only types from the protocol, which the build drops). */
const SOURCES = ['plugins/capture/client', 'plugins/capture/script.ts', 'plugins/capture/protocol.ts']
/** A site as most are set up: the EU rule, one mapped form, the banner's words in two languages. */
const SITE: ScriptSettings = {
  banner: 'eu',
  forms: [{ selector: '#signup', emailField: 'email', firstNameField: 'first_name' }],
  bannerText: {
    de: { message: 'Diese Seite misst Besuche und Werbeerfolge mit eigenen Cookies. Einverstanden?', accept: 'Zustimmen', reject: 'Ablehnen' },
    fr: { message: 'Ce site mesure les visites et les résultats publicitaires avec ses propres cookies. D’accord ?', accept: 'Accepter', reject: 'Refuser' },
  },
}

interface Rendered { body: string, gzip: Buffer, brotli: Buffer }
interface ScriptModule {
  renderScript: (settings: ScriptSettings) => Promise<Rendered>
  renderChunk: (name: never, settings?: ScriptSettings) => Promise<Rendered>
  CHUNKS: Record<string, string>
}
interface Size { raw: number, gzip: number, brotli: number }

/** Every part of a build: the main script for SITE, then each chunk (with SITE's data where the chunk takes it). */
async function parts(module: ScriptModule): Promise<Map<string, Size>> {
  const sizes = new Map<string, Size>()
  const size = (r: Rendered): Size => ({ raw: Buffer.byteLength(r.body), gzip: r.gzip.length, brotli: r.brotli.length })
  sizes.set('main', size(await module.renderScript(SITE)))
  for (const name of Object.keys(module.CHUNKS)) sizes.set(name, size(await module.renderChunk(name as never, SITE)))
  return sizes
}

/** The base ref's script sources in a temporary directory, resolving packages from this checkout. */
function checkOutBase(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-script-base-'))
  const archive = execFileSync('git', ['-C', ROOT, 'archive', BASE_REF, '--', ...SOURCES])
  execFileSync('tar', ['-x', '-C', dir], { input: archive })
  mkdirSync(join(dir, 'plugins/capture'), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

const current = await parts(await import(pathToFileURL(join(ROOT, 'plugins/capture/script.ts')).href) as ScriptModule)
const baseDir = checkOutBase()
let base: Map<string, Size>
try {
  base = await parts(await import(pathToFileURL(join(baseDir, 'plugins/capture/script.ts')).href) as ScriptModule)
} finally {
  rmSync(baseDir, { recursive: true, force: true })
}

const cell = (now: number | undefined, before: number | undefined): string =>
  now === undefined ? '—' : before === undefined ? `${now}` : `${now} (${before}${now === before ? '' : `, ${now > before ? '+' : ''}${now - before}`})`
console.log(`The tracking script's parts in bytes: now (${BASE_REF}, difference); a site with banner 'eu', one mapped form, banner words in 2 languages.\n`)
console.log(['part'.padEnd(8), 'raw'.padEnd(22), 'gzip'.padEnd(20), 'brotli'].join(' '))
for (const name of new Set([...current.keys(), ...base.keys()])) {
  const now = current.get(name)
  const before = base.get(name)
  console.log([name.padEnd(8), cell(now?.raw, before?.raw).padEnd(22), cell(now?.gzip, before?.gzip).padEnd(20), cell(now?.brotli, before?.brotli)].join(' '))
}

/** What a first page view downloads (gzip), by visitor: the parts it loads. */
const visitors: [string, string[]][] = [
  ['asked (banner shown, before a choice)', ['main', 'banner']],
  ['allowed, on a site without mapped forms', ['main', 'ids']],
  ['allowed, on a site with mapped forms', ['main', 'ids', 'forms']],
  ['refused, or not yet answered', ['main']],
]
const baseParts = (loads: string[]): string[] => loads.filter((name) => base.has(name))
console.log('\nFirst page view, gzip bytes downloaded (later pages use the cached copies):')
for (const [who, loads] of visitors) {
  const sum = (sizes: Map<string, Size>, names: string[]) => names.reduce((total, name) => total + (sizes.get(name)?.gzip ?? 0), 0)
  console.log(`  ${who.padEnd(42)} ${String(sum(current, loads)).padStart(6)} now (${loads.join(' + ')}), ${sum(base, baseParts(loads))} on ${BASE_REF} (${baseParts(loads).join(' + ')})`)
}
const main = current.get('main')!.gzip
console.log(`\nMain part: ${main} B gzip, budget ${MAIN_GZIP_BUDGET} (${main <= MAIN_GZIP_BUDGET ? 'met' : 'MISSED'}, ${MAIN_GZIP_BUDGET - main} B to spare).`)

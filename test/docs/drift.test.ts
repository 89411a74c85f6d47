import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtInPlugins } from '../../plugins/index.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { childEnv, REPO_ROOT, runDcgate, tempDir } from '../helpers/server-process.ts'

// The docs that list what the code has: they fail here when a plugin, a command or a route is added or removed
// without the page that lists it (issue 20: docs true to the product).
const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8')

/** Every Markdown page a user reads: the README and docs/ (adapter and plugin READMEs included). */
function markdownPages(): string[] {
  const pages = ['README.md']
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.md')) pages.push(path)
    }
  }
  for (const dir of ['docs', 'plugins', 'adapters']) walk(dir)
  return pages
}

/** `/api/v1/x/:id` and `/api/v1/x/{id}` alike: each parameter becomes `*`. */
const pattern = (path: string) => path.replace(/\{[^}]+\}|:[A-Za-z_]\w*/g, '*')

describe('docs that list what the code has', () => {
  it('docs/cli.md shows `dcgate --help` as the CLI prints it', async () => {
    const run = await runDcgate(['--help'], childEnv({ DCGATE_DATA_DIR: tempDir() }))
    expect(run.code).toBe(0)
    const block = /\$ npx dcgate --help\n([\s\S]*?)```/.exec(read('docs/cli.md'))
    expect(block, 'docs/cli.md has a "$ npx dcgate --help" block').not.toBeNull()
    expect(block![1]!.trim()).toBe(run.stdout.trim())
  })

  it('docs/configuration.md names every built-in plugin, in the default order, and no other', () => {
    const section = read('docs/configuration.md').split('### plugins')[1]!.split('\n### ')[0]!
    const listed = [...section.matchAll(/^\| `([\w-]+)` \|/gm)].map((m) => m[1]).filter((name) => name !== 'plugins')
    expect(listed).toEqual(Object.keys(builtInPlugins))
    const sentence = /There are (\w+) built-in plugins/.exec(section)
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve']
    expect(sentence?.[1]).toBe(words[Object.keys(builtInPlugins).length])
  })

  it('the shipped config runs every built-in plugin, so npm start shows all of them', async () => {
    const { default: shipped } = await import('../../config/dcgate.config.ts') as { default: { plugins?: unknown[] } }
    expect(shipped.plugins).toEqual(Object.keys(builtInPlugins))
  })

  it('docs/hooks.md has a row for every hook the kernel declares', () => {
    const declared = /export interface DcgateHooks \{([\s\S]*?)\n\}/.exec(read('core/hooks.ts'))![1]!
    const hooks = [...declared.matchAll(/^ {2}'([\w:-]+)':/gm)].map((m) => m[1])
    const rows = [...read('docs/hooks.md').matchAll(/^\| `([\w:-]+)` \|/gm)].map((m) => m[1])
    expect(hooks.length).toBeGreaterThan(5)
    expect(hooks.filter((hook) => !rows.includes(hook))).toEqual([])
  })

  describe('routes', () => {
    let app: TestApp
    let paths: string[]
    beforeAll(async () => {
      app = await bootTestApp()
      const spec = await (await app.request('/openapi.json')).json() as { paths: Record<string, unknown> }
      paths = Object.keys(spec.paths)
    }, 60_000)
    afterAll(() => app?.close())

    it('every route of the OpenAPI document is documented on some page', () => {
      const docs = markdownPages().map((page) => pattern(read(page))).join('\n')
      const missing = paths.filter((path) => !docs.includes(pattern(path)))
      expect(missing, 'routes no page of README.md, docs/, plugins/ or adapters/ names').toEqual([])
    })

    it('every /api/v1 path the docs name is a route', () => {
      // A mention may stop early (`/api/v1/export` for the export's routes); each of its segments must fit.
      const templates = paths.map((path) => new RegExp(`^${pattern(path).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\//g, '(?:$|/').replace(/\*/g, '[^/]+')}${')'.repeat(path.split('/').length - 1)}$`))
      const stale: string[] = []
      // Vendor paths in adapter READMEs and the example plugin's routes are not dcgate's.
      const ours = markdownPages().filter((page) => !page.startsWith('adapters/') && page !== 'docs/writing-a-plugin.md')
      for (const page of ours) {
        for (const [mention] of read(page).matchAll(/\/api\/v1(?:\/(?:[\w\-:.]*\w|\{\w+\}))+/g)) {
          if (!templates.some((t) => t.test(mention))) stale.push(`${page}: ${mention}`)
        }
      }
      expect(stale, 'paths the docs name that the server does not answer').toEqual([])
    })
  })
})

import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Every relative module a source file imports (static, re-exported, dynamic, type-only), as repo paths. */
export function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1]!)
  return specifiers.filter((s) => s.startsWith('.')).map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)))
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs)$/.test(entry.name) && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
}

/** `plugins/capture/...` → `capture`; anything else → undefined. */
function pluginOf(path: string): string | undefined {
  return /^plugins\/([^/]+)\//.exec(path)?.[1]
}

/** The rules of docs/architecture.md ("Layers"): what a file may not import, or why not. */
export function layerViolations(file: string, imports: readonly string[]): string[] {
  const problems: string[] = []
  for (const target of imports) {
    if (file.startsWith('core/') && /^(plugins|adapters)\/|^dcgate\.ts$/.test(target)) problems.push(`${file} → ${target}: core imports no plugin or adapter`)
    if (file.startsWith('adapters/') && target.startsWith('plugins/')) problems.push(`${file} → ${target}: an adapter imports no plugin`)
    const own = pluginOf(file)
    const other = pluginOf(target)
    if (own && other && own !== other) problems.push(`${file} → ${target}: a plugin imports no other plugin`)
  }
  return problems
}

describe('layers', () => {
  it('finds every kind of import, so the rules below see them all', () => {
    const text = [
      "import { a } from '../../plugins/capture/index.ts'",
      "import type { B } from '../adapters/x/index.ts'",
      "export { c } from './c.ts'",
      "import './side-effect.ts'",
      "const d = await import('../../plugins/dsar/index.ts')",
      "import {\n  e,\n  f,\n} from '../e.ts'",
    ].join('\n')
    expect(importsOf('core/cli/main.ts', text)).toEqual([
      'plugins/capture/index.ts', 'core/adapters/x/index.ts', 'core/cli/c.ts', 'core/e.ts', 'core/cli/side-effect.ts', 'plugins/dsar/index.ts',
    ])
  })

  it('reports each broken rule', () => {
    expect(layerViolations('core/app.ts', ['plugins/index.ts', 'adapters/index.ts', 'core/hooks.ts'])).toHaveLength(2)
    expect(layerViolations('adapters/sources/automation/index.ts', ['plugins/intake/schema.ts'])).toHaveLength(1)
    expect(layerViolations('plugins/email-risk/listeners.ts', ['plugins/capture/routes/identify.ts', 'plugins/email-risk/check.ts'])).toHaveLength(1)
    expect(layerViolations('dcgate.ts', ['plugins/index.ts', 'adapters/index.ts', 'core/cli/main.ts'])).toEqual([])
  })

  it('core imports no plugin or adapter; an adapter imports no plugin; a plugin imports no other plugin', () => {
    const files = [...sourceFiles('core'), ...sourceFiles('adapters'), ...sourceFiles('plugins')]
    expect(files.length).toBeGreaterThan(200)
    expect(files.flatMap((file) => layerViolations(file, importsOf(file)))).toEqual([])
  })
})

import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  CORE_INDEX_URL, STACK_LINE, killAllChildren, runStart, startServerProcess,
  type RunResult, type ServerProcess, type ServerProcessOptions,
} from '../helpers/server-process.ts'

// Each test spawns processes of 1-4 s (more on a loaded machine).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

const MODULE_PACKAGE = { 'package.json': '{ "type": "module" }\n' }

/** A config whose only site is `siteId`, so the banner shows which file was loaded. */
function configSource(siteId: string, withDefineConfig: boolean): string {
  const body = `{ server: { port: 3000 }, plugins: ['export'], sites: [{ id: '${siteId}', name: 'From ${siteId}' }] }`
  return withDefineConfig
    ? `import { defineConfig } from '${CORE_INDEX_URL}'\n\nexport default defineConfig(${body})\n`
    : `export default ${body}\n`
}

interface BootCase {
  ext: 'ts' | 'mjs' | 'js'
  defineConfig: boolean
  via: 'flag' | 'env'
  /** Write a package.json `{"type":"module"}` beside the file. */
  modulePackage: boolean
}

const bootCases: Record<string, BootCase> = {
  'ts-define': { ext: 'ts', defineConfig: true, via: 'flag', modulePackage: false },
  'ts-plain': { ext: 'ts', defineConfig: false, via: 'env', modulePackage: false },
  'mjs-define': { ext: 'mjs', defineConfig: true, via: 'env', modulePackage: false },
  'mjs-plain': { ext: 'mjs', defineConfig: false, via: 'flag', modulePackage: false },
  'js-define': { ext: 'js', defineConfig: true, via: 'flag', modulePackage: true },
  'js-plain': { ext: 'js', defineConfig: false, via: 'env', modulePackage: true },
}

const booted: Record<string, PromiseSettledResult<ServerProcess>> = {}

beforeAll(async () => {
  const entries = Object.entries(bootCases)
  const results = await Promise.allSettled(entries.map(([id, c]) => startServerProcess({
    config: configSource(id, c.defineConfig),
    fileName: `dcgate.config.${c.ext}`,
    files: c.modulePackage ? MODULE_PACKAGE : {},
    configVia: c.via,
  })))
  entries.forEach(([id], index) => { booted[id] = results[index]! })
}, 180_000)

afterAll(async () => {
  await Promise.all(Object.values(booted).map((result) => result.status === 'fulfilled' ? result.value.close() : undefined))
  killAllChildren()
})

describe('dcgate start loads the config file from anywhere on disk', () => {
  for (const [id, c] of Object.entries(bootCases)) {
    const how = c.via === 'flag' ? 'start --config F' : 'DCGATE_CONFIG=F'
    const title = `.${c.ext} ${c.defineConfig ? 'with' : 'without'} defineConfig${c.modulePackage ? ' (package.json type module)' : ''}, via ${how}`
    it(title, async () => {
      const result = booted[id]!
      if (result.status === 'rejected') throw result.reason
      const server = result.value
      const response = await fetch(`${server.url}/openapi.json`)
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ openapi: expect.any(String) })
      // The banner lists the site of this file, not of the shipped config.
      expect(server.stdout).toMatch(new RegExp(`^\\s+${id} \\(active\\) cop_key cop_`, 'm'))
      expect(server.stdout).not.toMatch(/^\s+demo \(active\)/m)
      expect(server.stdout).not.toMatch(/^ {2}dashboard /m) // not in this file's plugins
      expect(await server.stop()).toBe(0)
    })
  }
})

describe('the banner with the dashboard plugin', () => {
  it('says where to sign in and where the admin token is, never the token itself', async () => {
    const server = await startServerProcess({ config: `export default { plugins: ['export', 'dashboard'], sites: [{ id: 'demo', name: 'Demo' }] }\n` })
    try {
      const signIn = /^ {2}dashboard (http:\S+\/dashboard) \(admin token: cat (\S+admin-token)\)$/m.exec(server.stdout)
      expect(signIn, server.stdout).not.toBeNull()
      expect(signIn![1]).toBe(`${server.url.replace('127.0.0.1', 'localhost')}/dashboard`)
      expect(server.stdout).not.toContain(readFileSync(signIn![2]!, 'utf8').trim())
      expect((await fetch(`${server.url}/dashboard`)).status).toBe(200)
    }
    finally {
      expect(await server.stop()).toBe(0)
    }
  })
})

interface FailCase extends ServerProcessOptions {
  args?: (configFile: string) => string[]
  /** What stderr must say; a function gets the config file's path. */
  expect: (configFile: string) => (string | RegExp)[]
}

const SITE = `sites: [{ id: 'demo', name: 'Demo' }]`
const missingFile = join(tmpdir(), `dcgate-missing-${randomBytes(6).toString('hex')}`, 'dcgate.config.ts')

const failCases: Record<string, FailCase> = {
  'a bad site id names sites[0].id': {
    config: `export default { sites: [{ id: 'Bad Id!', name: 'Bad' }] }\n`,
    expect: () => ['Invalid configuration', /sites\[0\]\.id: must be lower-case/],
  },
  'a misspelt key names it': {
    config: `export default { sever: { port: 4000 }, ${SITE} }\n`,
    expect: () => ['Invalid configuration', /sever: unknown key/],
  },
  'a non-numeric server.port in the file names server.port': {
    config: `export default { server: { port: 'abc' }, ${SITE} }\n`,
    env: { PORT: undefined },
    expect: () => ['Invalid configuration', /server\.port: /],
  },
  'PORT=abc in the environment names PORT': {
    env: { PORT: 'abc' },
    expect: () => ['Invalid configuration', /PORT: must be a whole number/],
  },
  'a missing file (DCGATE_CONFIG) names the path': {
    configVia: 'env',
    env: { DCGATE_CONFIG: missingFile },
    expect: () => [`Config file not found: ${missingFile}`],
  },
  'a missing file (--config) names the path': {
    args: (file) => ['start', '--config', `${file}.missing.mjs`],
    expect: (file) => [`Config file not found: ${file}.missing.mjs`],
  },
  'a file without a default export names the file': {
    config: `export const config = { ${SITE} }\n`,
    expect: (file) => [`Config file ${file} has no default export`],
  },
  'a file that does not parse names the file': {
    config: `export default { sites: [ }\n`,
    expect: (file) => [`Could not load config file ${file}`],
  },
  'an unknown plugin names the plugin': {
    config: `export default { plugins: ['export', 'nope'], ${SITE} }\n`,
    expect: () => ['Unknown plugin "nope"', 'built-in plugins: capture, intake, release, export, dsar, email-risk'],
  },
  'a plugin listed before a dependency it needs names both': {
    config: `import { definePlugin } from '${CORE_INDEX_URL}'
const needsExport = definePlugin({ name: 'needs-export', dependencies: ['export'], setup() {} })
export default { plugins: [needsExport, 'export'], ${SITE} }
`,
    expect: () => ['Plugin "needs-export" depends on "export"', 'list "export" before "needs-export"'],
  },
  'a plugin whose dependency is missing names both': {
    config: `import { definePlugin } from '${CORE_INDEX_URL}'
const needsExport = definePlugin({ name: 'needs-export', dependencies: ['export'], setup() {} })
export default { plugins: [needsExport], ${SITE} }
`,
    expect: () => ['Plugin "needs-export" depends on "export"', 'add "export" to plugins'],
  },
  'an inline plugin whose setup throws names the plugin and the error': {
    config: `import { definePlugin } from '${CORE_INDEX_URL}'
const boom = definePlugin({ name: 'boom', setup() { throw new Error('no webhook secret configured') } })
export default { plugins: ['export', boom], ${SITE} }
`,
    expect: () => ['Plugin "boom" failed to set up', 'no webhook secret configured'],
  },
}

describe('dcgate start refuses an invalid config: non-zero exit, the problem on stderr, no stack trace', () => {
  const results: Record<string, RunResult & { configFile: string }> = {}
  beforeAll(async () => {
    await Promise.all(Object.entries(failCases).map(async ([name, c]) => {
      results[name] = await runStart({ fileName: 'dcgate.config.mjs', ...c })
    }))
  }, 120_000)

  for (const [name, c] of Object.entries(failCases)) {
    it(name, () => {
      const result = results[name]!
      expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).not.toBe(0)
      expect(result.code).not.toBeNull()
      expect(result.stderr).toMatch(/^dcgate: /)
      for (const expected of c.expect(result.configFile)) {
        if (typeof expected === 'string') expect(result.stderr).toContain(expected)
        else expect(result.stderr).toMatch(expected)
      }
      expect(result.stdout + result.stderr).not.toMatch(STACK_LINE)
      expect(result.stdout).not.toMatch(/listening on/)
    })
  }
})

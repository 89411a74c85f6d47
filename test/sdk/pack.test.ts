import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { serve } from 'h3'
import type { Server } from 'srvx'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWorld, type EmailRiskWorld } from '../email-risk/support.ts'

// Issue 20, item 5: the Node SDK installs from its tarball in a folder that knows nothing of the repository, and
// passes its own tests there, one of them against a running dcgate. Commands run asynchronously: the dcgate the
// SDK asks lives in this process.
const run = promisify(execFile)
const SDK_DIR = fileURLToPath(new URL('../../plugins/email-risk/sdk/', import.meta.url))
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url))
/** npm without the repository's settings or the network: what a user with only the tarball has. */
const NPM_ENV = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' }

let work: string
let tarball: string
let consumer: string
let world: EmailRiskWorld
let server: Server

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dcgate-sdk-pack-'))
  const [packed] = await Promise.all([
    // prepack builds dist/ (tsc) before the tarball is made.
    run('npm', ['pack', '--pack-destination', work], { cwd: SDK_DIR, env: NPM_ENV, timeout: 60_000 }),
    (async () => {
      world = await startWorld({ capture: false })
      server = serve(world.app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
      await server.ready()
    })(),
  ])
  tarball = join(work, packed.stdout.trim().split('\n').at(-1)!)
  consumer = join(work, 'consumer')
  mkdirSync(consumer)
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }))
  await run('npm', ['install', '--offline', '--ignore-scripts', tarball], { cwd: consumer, env: NPM_ENV, timeout: 60_000 })
}, 120_000)
afterAll(async () => {
  await server?.close(true)
  await world?.close()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe('the Node SDK as a package', () => {
  it('packs the compiled JS and its types, the README and package.json, and no sources', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball])
    const files = stdout.trim().split('\n').sort()
    expect(files).toContain('package/dist/index.js')
    expect(files).toContain('package/dist/index.d.ts')
    expect(files).toContain('package/README.md')
    expect(files).toContain('package/package.json')
    expect(files.filter((file) => !file.startsWith('package/dist/') && !['package/README.md', 'package/package.json'].includes(file))).toEqual([])
    expect(readdirSync(join(consumer, 'node_modules/@dcgate/node-sdk/dist'))).toContain('index.js')
  })

  it('passes its own tests where it is installed, one of them against a running dcgate', async () => {
    cpSync(join(SDK_DIR, 'test'), join(consumer, 'test'), { recursive: true })
    // No path: Node 22 and 24 read `node --test test/` as one file to run; bare --test finds test/*.test.mjs on every Node.
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap'], {
      cwd: consumer, timeout: 60_000, env: { ...process.env, DCGATE_TEST_URL: server.url!, DCGATE_TEST_KEY: world.key, NODE_OPTIONS: '' },
    })
    expect(stdout).toMatch(/^# pass 6$/m)
    expect(stdout).toMatch(/^# fail 0$/m)
    expect(stdout).toMatch(/^# skipped 0$/m)
  }, 90_000)

  it('type-checks a TypeScript consumer against the shipped .d.ts', async () => {
    writeFileSync(join(consumer, 'check.ts'), [
      "import { DCService, DCServiceError, type EmailCheckResult } from '@dcgate/node-sdk'",
      "const result: Promise<EmailCheckResult> = new DCService({ apiKey: 'dcp_x', timeout: 2000 }).checkEmail('ann@example.com')",
      "export const action = result.then((r) => r.emailInfo.action).catch((error: unknown) => (error instanceof DCServiceError ? error.status : 0))",
    ].join('\n'))
    await run(process.execPath, [TSC, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--lib', 'es2022,dom', 'check.ts'], { cwd: consumer, timeout: 60_000 })
  }, 90_000)
})

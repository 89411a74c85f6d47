import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  STACK_LINE, childEnv, freePort, killAllChildren, runCommand, startServerProcess,
  type RunResult, type ServerProcess,
} from '../helpers/server-process.ts'
import { onPostgres } from '../helpers/database.ts'

// Each test spawns processes of 1-4 s (more on a loaded machine).
vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 })

interface SiteJson { id: string, name: string, status: string, plan: string, domains: string[], cop_key: string }
interface SiteDetailJson extends SiteJson { release_secret: string, script_tag: string, release_url: string }
interface KeyJson { id: string, name: string, prefix: string, created_at: string, last_used_at: string | null }

const KEY = /^dcp_[A-Za-z0-9_-]{43}$/

let server: ServerProcess
beforeAll(async () => {
  server = await startServerProcess()
})
afterAll(async () => {
  await server?.close()
  killAllChildren()
})

/** Exit 0, nothing on stderr, and the output parsed as JSON when asked for. */
function ok(result: RunResult): RunResult {
  expect(result.code, `exit code; stderr: ${result.stderr}`).toBe(0)
  expect(result.stderr).toBe('')
  return result
}
function json<T>(result: RunResult): T {
  return JSON.parse(ok(result).stdout) as T
}

function health(key: string): Promise<{ status: number, body: unknown }> {
  return fetch(`${server.url}/api/v1/export/health`, { headers: { 'x-dc-key': key } })
    .then(async (response) => ({ status: response.status, body: await response.json() as unknown }))
}

/** What `sites show demo --json` said before the restart. */
let before: SiteDetailJson
/** A key created (and kept) before the restart. */
let keptKey: string

describe('dcgate sites', () => {
  it('sites list shows each site with its cop_key; --json is an array of sites', async () => {
    const [human, machine] = await Promise.all([server.cli(['sites', 'list']), server.cli(['sites', 'list', '--json'])])
    const sites = json<SiteJson[]>(machine)
    expect(sites).toEqual([{ id: 'demo', name: 'Demo', status: 'active', plan: 'free', domains: [], cop_key: expect.stringMatching(/^cop_[A-Za-z0-9_-]{20}$/) }])
    const copKey = sites[0]!.cop_key
    expect(ok(human).stdout).toMatch(/^ID\s+NAME\s+STATUS\s+PLAN\s+COP_KEY$/m)
    expect(human.stdout).toMatch(new RegExp(`^demo\\s+Demo\\s+active\\s+free\\s+${copKey}$`, 'm'))
  })

  it('sites show prints the cop_key, the release secret, the script tag and the release URL; --json has them too', async () => {
    const [human, machine] = await Promise.all([server.cli(['sites', 'show', 'demo']), server.cli(['sites', 'show', 'demo', '--json'])])
    before = json<SiteDetailJson>(machine)
    expect(before).toMatchObject({ id: 'demo', name: 'Demo', cop_key: expect.stringMatching(/^cop_/), release_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) })
    const { cop_key: copKey, release_secret: releaseSecret, script_tag: scriptTag } = before
    expect(scriptTag).toMatch(new RegExp(`^<script id="dcgate-script" async src="http://[^"]+/script\\?cop_key=${copKey}"></script>$`))

    const text = ok(human).stdout
    expect(text).toMatch(new RegExp(`^cop_key\\s+${copKey}$`, 'm'))
    expect(text).toMatch(new RegExp(`^release secret\\s+${releaseSecret}$`, 'm'))
    expect(text).toContain(scriptTag)
    expect(before.release_url).toMatch(new RegExp(`^http://[^/]+/api/v1/crm-release/${copKey}/${releaseSecret}$`))
    expect(text).toContain(before.release_url)
  })
})

describe('dcgate keys', () => {
  it('creates a key printed in full once, which works until it is deleted by its prefix', async () => {
    const created = ok(await server.cli(['keys', 'create', '--site', 'demo', '--name', 'first']))
    const [firstLine, ...others] = created.stdout.split('\n')
    const key = firstLine!
    expect(key).toMatch(KEY)
    // At the server's public URL, as the banner and `sites show` say it, not the loopback address the CLI talks to.
    expect(others.join('\n')).toContain(`curl -H "x-dc-key: ${key}" http://localhost:${new URL(server.url).port}/api/v1/export/health`)

    expect(await health(key)).toEqual({ status: 200, body: { success: true, app_id: 'demo', identified_user_count: 0 } })

    const prefix = key.slice(0, 12)
    const listed = ok(await server.cli(['keys', 'list', '--site', 'demo']))
    expect(listed.stdout).toMatch(/^PREFIX\s+NAME\s+CREATED\s+LAST USED$/m)
    expect(listed.stdout).toMatch(new RegExp(`^${prefix}\\s+first\\s`, 'm'))
    expect(listed.stdout).not.toContain(key)
    expect(listed.stdout).not.toContain(key.slice(0, 13))

    const deleted = ok(await server.cli(['keys', 'delete', prefix, '--site', 'demo']))
    expect(deleted.stdout).toContain(prefix)
    const [refused, after] = await Promise.all([health(key), server.cli(['keys', 'list', '--site', 'demo'])])
    expect(refused).toEqual({ status: 401, body: { message: 'Invalid API key' } })
    expect(ok(after).stdout).not.toContain(prefix)
  })
})

describe('--json on every command prints parseable JSON', () => {
  it('keys create, keys list, keys delete, sites list, sites show, migrate', async () => {
    const [kept, doomed] = await Promise.all([
      server.cli(['keys', 'create', '--site', 'demo', '--name', 'kept', '--json']),
      server.cli(['keys', 'create', '--site', 'demo', '--name', 'doomed', '--json']),
    ])
    const keptJson = json<KeyJson & { key: string }>(kept)
    const doomedJson = json<KeyJson & { key: string }>(doomed)
    expect(keptJson).toEqual({ key: expect.stringMatching(KEY), id: expect.any(String), name: 'kept', prefix: keptJson.key.slice(0, 12), created_at: expect.any(String), last_used_at: null })
    keptKey = keptJson.key

    const listed = json<KeyJson[]>(await server.cli(['keys', 'list', '--site', 'demo', '--json']))
    const summary = (created: KeyJson) => ({ id: created.id, name: created.name, prefix: created.prefix, created_at: created.created_at, last_used_at: expect.toBeOneOf([null, expect.any(String)]) })
    expect(listed).toEqual(expect.arrayContaining([summary(keptJson), summary(doomedJson)]))
    expect(JSON.stringify(listed)).not.toContain(keptJson.key)
    expect(JSON.stringify(listed)).not.toContain(doomedJson.key)

    const deleted = json<KeyJson>(await server.cli(['keys', 'delete', doomedJson.prefix, '--site', 'demo', '--json']))
    expect(deleted).toMatchObject({ name: 'doomed', prefix: doomedJson.prefix })

    const [sites, site, migrated] = await Promise.all([
      server.cli(['sites', 'list', '--json']),
      server.cli(['sites', 'show', 'demo', '--json']),
      server.cli(['migrate', '--json']),
    ])
    expect(json<SiteJson[]>(sites)).toHaveLength(1)
    expect(json<SiteDetailJson>(site).id).toBe('demo')
    expect(json<{ applied: string[] }>(migrated)).toMatchObject({ applied: [] })
  })
})

describe('dcgate migrate', () => {
  it('reports the database up to date while the server runs', async () => {
    const result = ok(await server.cli(['migrate']))
    expect(result.stdout).toMatch(/up to date/)
    // The embedded database belongs to the running server: migrate asks it rather than opening the data dir.
    if (!onPostgres) expect(result.stdout).toContain(`the running server at ${server.url}`)
  })
})

describe('errors: one line on stderr, non-zero exit, no stack trace', () => {
  const cases: Record<string, { args: string[], env?: Record<string, string>, url?: boolean, message: RegExp }> = {
    'an unknown site (keys)': { args: ['keys', 'list', '--site', 'nope'], message: /Unknown site "nope"; configured sites: demo/ },
    'an unknown site (sites show)': { args: ['sites', 'show', 'nope'], message: /Unknown site "nope"; configured sites: demo/ },
    'a missing --site': { args: ['keys', 'list'], message: /--site is required/ },
    'an unknown command': { args: ['frobnicate'], message: /Unknown command "frobnicate"/ },
    'a wrong admin token': { args: ['sites', 'list'], env: { DCGATE_ADMIN_TOKEN: 'wrong-token-wrong-token' }, message: /wrong admin token/i },
    'a server that is not running': { args: ['sites', 'list'], url: true, message: /cannot reach the dcgate server at http:\/\/127\.0\.0\.1:\d+/i },
  }
  const results: Record<string, RunResult> = {}
  beforeAll(async () => {
    const closedPort = await freePort()
    await Promise.all(Object.entries(cases).map(async ([name, c]) => {
      const args = c.url ? [...c.args, '--url', `http://127.0.0.1:${closedPort}`] : c.args
      results[name] = await server.cli(args, c.env)
    }))
  })

  for (const [name, c] of Object.entries(cases)) {
    it(name, () => {
      const result = results[name]!
      expect(result.code).not.toBe(0)
      expect(result.code).not.toBeNull()
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(c.message)
      expect(result.stderr).toMatch(/^dcgate: /)
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(result.stderr).not.toMatch(STACK_LINE)
    })
  }
})

/** Files under `root` another local user can open: every directory on the way lets others in and the file lets them read or write. */
function openToOthers(root: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    if ((statSync(dir).mode & 0o001) === 0) return
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (statSync(path).mode & 0o006) found.push(path)
    }
  }
  walk(root)
  return found
}

describe('the data dir', () => {
  it('holds the admin token in <dataDir>/admin-token, readable by its owner only', () => {
    expect(statSync(join(server.dataDir, 'admin-token')).mode & 0o777).toBe(0o600)
  })

  it('lets no other local user read or write anything in it', () => {
    expect(openToOthers(server.dataDir)).toEqual([])
  })
})

describe('npx dcgate', () => {
  it('runs the package\'s own bin from the repo', async () => {
    const result = await runCommand('npx', ['--no-install', 'dcgate', '--help'], childEnv())
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain('Usage: dcgate <command> [options]')
    expect(result.stdout).toContain('keys create --site <id> --name <name>')
  })
})

describe('restart on the same data dir and database', () => {
  it('keeps the cop_key, the release secret and the keys', async () => {
    expect(before, 'sites show ran first').toBeDefined()
    expect(keptKey, 'a key was kept').toBeDefined()
    expect(await server.stop()).toBe(0)
    await server.restart()
    const after = json<SiteDetailJson>(await server.cli(['sites', 'show', 'demo', '--json']))
    expect(after.cop_key).toBe(before.cop_key)
    expect(after.release_secret).toBe(before.release_secret)
    expect(await health(keptKey)).toEqual({ status: 200, body: { success: true, app_id: 'demo', identified_user_count: 0 } })
  })
})

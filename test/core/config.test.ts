import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfigFile, resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'

function problems(input: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    resolveConfig(input, env)
  }
  catch (error) {
    if (error instanceof BootError) return error.details
    throw error
  }
  throw new Error('expected the config to be rejected')
}

describe('config validation', () => {
  it('fills defaults for an empty config', () => {
    const config = resolveConfig({}, {})
    expect(config.server).toMatchObject({ port: 3000, bodyLimit: 1_048_576, trustProxy: false })
    expect(config.sites).toEqual([])
    expect(config.admin.allowRemote).toBe(false)
    expect(config.dataDir).toBe(join(process.cwd(), '.data'))
  })

  it('fills site defaults', () => {
    const [site] = resolveConfig({ sites: [{ id: 'shop', name: 'Shop' }] }, {}).sites
    expect(site).toMatchObject({ status: 'active', plan: 'free', domains: [], events: [], destinations: {}, deletion: { enabled: true }, consent: { banner: 'eu' } })
  })

  it('names the path of every error', () => {
    const found = problems({
      server: { port: 'abc' },
      sites: [
        { id: 'ok', name: 'Ok', events: [{ key: 'demo booked', name: 'x', release: 'later' }] },
        { id: 'Bad Id!', name: '', plan: 'gold', destinations: { meta: 'not-an-object' } },
      ],
    })
    expect(found).toEqual(expect.arrayContaining([
      expect.stringMatching(/^server\.port: /),
      expect.stringMatching(/^sites\[0\]\.events\[0\]\.key: /),
      expect.stringMatching(/^sites\[0\]\.events\[0\]\.release: /),
      expect.stringMatching(/^sites\[1\]\.id: /),
      expect.stringMatching(/^sites\[1\]\.name: /),
      expect.stringMatching(/^sites\[1\]\.plan: /),
      expect.stringMatching(/^sites\[1\]\.destinations\.meta: /),
    ]))
  })

  it('does not echo rejected values, which may be secrets', () => {
    const found = problems({ admin: { token: 'short-secret' }, sites: [{ id: 'a', name: 'A', copKey: 'has spaces secret!' }] })
    expect(found.join('\n')).not.toContain('short-secret')
    expect(found.join('\n')).not.toContain('has spaces secret!')
    expect(found).toEqual(expect.arrayContaining([expect.stringMatching(/^admin\.token: /), expect.stringMatching(/^sites\[0\]\.copKey: /)]))
  })

  it('rejects duplicate site ids and a pinned cop_key used twice', () => {
    expect(problems({ sites: [{ id: 'a', name: 'A' }, { id: 'a', name: 'B' }] })).toEqual([expect.stringContaining('site id must be unique')])
    const copKey = 'cop_pinnedpinnedpinned'
    expect(problems({ sites: [{ id: 'a', name: 'A', copKey }, { id: 'b', name: 'B', copKey }] })).toEqual([expect.stringContaining('copKey')])
  })

  it('rejects a config that is not an object', () => {
    expect(problems(42)).toHaveLength(1)
    expect(problems(null)).toHaveLength(1)
  })
})

describe('environment overrides', () => {
  it('PORT, DATABASE_URL, REDIS_URL, DCGATE_DATA_DIR and DCGATE_ADMIN_TOKEN win over the file', () => {
    const config = resolveConfig({ server: { port: 1 }, database: { url: 'postgres://file/db' }, dataDir: 'file-dir' }, {
      PORT: '4321',
      DATABASE_URL: 'postgresql://env/db',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DCGATE_DATA_DIR: '/tmp/dcgate-env',
      DCGATE_ADMIN_TOKEN: 'an-admin-token-from-env',
    })
    expect(config.server.port).toBe(4321)
    expect(config.database.url).toBe('postgresql://env/db')
    expect(config.storage.url).toBe('redis://127.0.0.1:6379')
    expect(config.dataDir).toBe('/tmp/dcgate-env')
    expect(config.admin.token).toBe('an-admin-token-from-env')
  })

  it('names the variable when an override is invalid', () => {
    expect(problems({}, { PORT: 'abc' })).toEqual([expect.stringMatching(/^PORT: /)])
    expect(problems({}, { DATABASE_URL: 'mysql://x' })).toEqual([expect.stringMatching(/^database\.url: /)])
  })
})

describe('config files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dcgate-config-'))
  const write = (name: string, text: string) => {
    const file = join(dir, name)
    writeFileSync(file, text)
    return file
  }

  it('loads a .ts file that calls defineConfig, from anywhere on disk', async () => {
    const core = new URL('../../core/index.ts', import.meta.url).href
    const file = write('a.config.ts', `import { defineConfig } from '${core}'\nexport default defineConfig({ sites: [{ id: 'ts', name: 'TS' }] })\n`)
    const config = await loadConfigFile(file, {})
    expect(config.sites[0]!.id).toBe('ts')
    expect(config.configFile).toBe(file)
  })

  it('loads a plain .mjs object without defineConfig', async () => {
    const config = await loadConfigFile(write('b.mjs', `export default { sites: [{ id: 'mjs', name: 'MJS' }] }\n`), {})
    expect(config.sites[0]!.id).toBe('mjs')
  })

  it('explains a missing file, a missing default export and a file that throws', async () => {
    await expect(loadConfigFile(join(dir, 'nope.ts'), {})).rejects.toThrow(/Config file not found/)
    await expect(loadConfigFile(write('c.mjs', 'export const x = 1\n'), {})).rejects.toThrow(/no default export/)
    await expect(loadConfigFile(write('d.mjs', 'throw new Error("boom in config")\n'), {})).rejects.toMatchObject({ details: ['boom in config'] })
  })
})

describe('misspelt and missing keys', () => {
  it('rejects unknown keys at every level instead of ignoring them', () => {
    expect(problems({ sever: {}, server: { prot: 1 }, sites: [{ id: 'a', name: 'A', destinaton: {}, deletion: { enabld: true } }] })).toEqual(expect.arrayContaining([
      'sever: unknown key (check its spelling)',
      'server.prot: unknown key (check its spelling)',
      'sites[0].destinaton: unknown key (check its spelling)',
      'sites[0].deletion.enabld: unknown key (check its spelling)',
    ]))
  })

  it('says a required key is required', () => {
    expect(problems({ sites: [{ id: 'a' }] })).toEqual(['sites[0].name: is required'])
  })
})

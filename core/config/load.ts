import { existsSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL, fileURLToPath } from 'node:url'
import * as v from 'valibot'
import { BootError } from '../errors.ts'
import { formatIssues } from './issues.ts'
import { ConfigSchema, CORE_KEYS, type ResolvedConfig } from './schema.ts'
import { resolvePluginSections, type PluginCatalog, type PluginDefinition } from '../plugin.ts'

const SHIPPED_CONFIG = fileURLToPath(new URL('../../config/dcgate.config.ts', import.meta.url))

/** Which file to load: --config, then DCGATE_CONFIG, then ./config/dcgate.config.ts, then the shipped one. */
export function resolveConfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? env.DCGATE_CONFIG
  if (chosen) return isAbsolute(chosen) ? chosen : resolve(process.cwd(), chosen)
  const local = resolve(process.cwd(), 'config/dcgate.config.ts')
  return existsSync(local) ? local : SHIPPED_CONFIG
}

/** Imports a .ts/.mjs/.js config file whose default export is the config object, then resolves it. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env, plugins: PluginCatalog | 'unchecked' = {}): Promise<ResolvedConfig> {
  if (!existsSync(file)) throw new BootError(`Config file not found: ${file}`)
  let mod: { default?: unknown }
  try {
    mod = await import(pathToFileURL(file).href) as { default?: unknown }
  }
  catch (error) {
    throw new BootError(`Could not load config file ${file}`, [firstLine(error)], { cause: error })
  }
  if (mod.default === undefined) throw new BootError(`Config file ${file} has no default export`, ['end it with: export default defineConfig({ ... })'])
  return { ...resolveConfig(mod.default, env, plugins), configFile: file }
}

/**
 * Applies the environment overrides and validates; throws a BootError naming every bad path. The kernel's keys are
 * checked here; any other top-level key must be the section of a plugin in `plugins` (the built-in catalog) or an
 * inline plugin of the config, and is validated with that plugin's schema. `unchecked` leaves the other keys as
 * they are (the admin commands of the CLI, which only talk to a server that checked them).
 */
export function resolveConfig(input: unknown, env: NodeJS.ProcessEnv = process.env, plugins: PluginCatalog | 'unchecked' = {}): ResolvedConfig {
  const withEnv = applyEnvOverrides(input, env)
  const { own, extra } = splitKeys(withEnv)
  const result = v.safeParse(ConfigSchema, own)
  const { sections, problems } = plugins === 'unchecked'
    ? { sections: extra, problems: [] }
    : resolvePluginSections(extra, [...Object.values(plugins), ...inlinePlugins(own)])
  if (!result.success || problems.length > 0) {
    throw new BootError('Invalid configuration', [...(result.success ? [] : formatIssues(result.issues)), ...problems])
  }
  const config = { ...result.output, ...sections } as ResolvedConfig
  config.dataDir = resolve(process.cwd(), config.dataDir)
  return config
}

/** The kernel's keys apart from the rest (plugin sections, or misspellings). */
function splitKeys(input: unknown): { own: unknown, extra: Record<string, unknown> } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { own: input, extra: {} }
  const own: Record<string, unknown> = {}
  const extra: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(input)) (CORE_KEYS.includes(key) ? own : extra)[key] = value
  return { own, extra }
}

/** Plugins given as definitions in the config's own `plugins` list: their sections are known too. */
function inlinePlugins(own: unknown): PluginDefinition[] {
  const list = (own as { plugins?: unknown } | undefined)?.plugins
  if (!Array.isArray(list)) return []
  return list.filter((entry): entry is PluginDefinition => typeof entry === 'object' && entry !== null && typeof (entry as { name?: unknown }).name === 'string')
}

/**
 * PORT, HOST, DATABASE_URL, REDIS_URL, DCGATE_DATA_DIR, DCGATE_ADMIN_TOKEN, DCGATE_SERVER_SECRET and
 * DCGATE_PREVIOUS_SERVER_SECRETS (comma-separated) win over the file.
 */
function applyEnvOverrides(input: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input
  const config = { ...(input as Record<string, unknown>) }
  const section = (key: string): Record<string, unknown> => {
    const current = config[key]
    const copy = typeof current === 'object' && current !== null ? { ...(current as Record<string, unknown>) } : {}
    config[key] = copy
    return copy
  }
  if (env.PORT) {
    const port = /^\d+$/.test(env.PORT) ? Number(env.PORT) : Number.NaN
    if (Number.isNaN(port)) throw new BootError('Invalid configuration', [`PORT: must be a whole number, got "${env.PORT}"`])
    section('server').port = port
  }
  if (env.HOST) section('server').host = env.HOST
  if (env.DATABASE_URL) section('database').url = env.DATABASE_URL
  if (env.REDIS_URL) section('storage').url = env.REDIS_URL
  if (env.DCGATE_DATA_DIR) config.dataDir = env.DCGATE_DATA_DIR
  if (env.DCGATE_ADMIN_TOKEN) section('admin').token = env.DCGATE_ADMIN_TOKEN
  if (env.DCGATE_SERVER_SECRET) section('server').secret = env.DCGATE_SERVER_SECRET
  if (env.DCGATE_PREVIOUS_SERVER_SECRETS) section('server').previousSecrets = env.DCGATE_PREVIOUS_SERVER_SECRETS.split(',').map((s) => s.trim()).filter(Boolean)
  return config
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
}

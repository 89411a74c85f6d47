import { existsSync } from 'node:fs'
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL, fileURLToPath } from 'node:url'
import * as v from 'valibot'
import { BootError } from '../errors.ts'
import { formatIssues } from './issues.ts'
import { ConfigSchema, type ResolvedConfig } from './schema.ts'

const SHIPPED_CONFIG = fileURLToPath(new URL('../../config/dcgate.config.ts', import.meta.url))

/** Which file to load: --config, then DCGATE_CONFIG, then ./config/dcgate.config.ts, then the shipped one. */
export function resolveConfigPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = explicit ?? env.DCGATE_CONFIG
  if (chosen) return isAbsolute(chosen) ? chosen : resolve(process.cwd(), chosen)
  const local = resolve(process.cwd(), 'config/dcgate.config.ts')
  return existsSync(local) ? local : SHIPPED_CONFIG
}

/** Imports a .ts/.mjs/.js config file whose default export is the config object, then resolves it. */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedConfig> {
  if (!existsSync(file)) throw new BootError(`Config file not found: ${file}`)
  let mod: { default?: unknown }
  try {
    mod = await import(pathToFileURL(file).href) as { default?: unknown }
  }
  catch (error) {
    throw new BootError(`Could not load config file ${file}`, [firstLine(error)], { cause: error })
  }
  if (mod.default === undefined) throw new BootError(`Config file ${file} has no default export`, ['end it with: export default defineConfig({ ... })'])
  return { ...resolveConfig(mod.default, env), configFile: file }
}

/** Applies the environment overrides and validates; throws a BootError naming every bad path. */
export function resolveConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedConfig {
  const withEnv = applyEnvOverrides(input, env)
  const result = v.safeParse(ConfigSchema, withEnv)
  if (!result.success) throw new BootError('Invalid configuration', formatIssues(result.issues))
  const config = result.output
  config.dataDir = resolve(process.cwd(), config.dataDir)
  return config
}

/** PORT, DATABASE_URL, REDIS_URL, DCGATE_DATA_DIR and DCGATE_ADMIN_TOKEN win over the file. */
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
  if (env.DATABASE_URL) section('database').url = env.DATABASE_URL
  if (env.REDIS_URL) section('storage').url = env.REDIS_URL
  if (env.DCGATE_DATA_DIR) config.dataDir = env.DCGATE_DATA_DIR
  if (env.DCGATE_ADMIN_TOKEN) section('admin').token = env.DCGATE_ADMIN_TOKEN
  return config
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
}

import type { H3 } from 'h3'
import type { ConsolaInstance } from 'consola'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { EntitySchema } from '@mikro-orm/core'
import type { Storage } from 'unstorage'
import type { Keyring } from './secrets/keyring.ts'
import * as v from 'valibot'
import type { DcgateHookable, ErrorContext } from './hooks.ts'
import type { ResolvedConfig } from './config/schema.ts'
import type { Registry } from './registry.ts'
import type { RunPrepared } from './db/prepared.ts'
import type { RouteTable } from './http/routes.ts'
import type { KeyVerifier } from './auth/verifier.ts'
import type { SiteDirectory } from './sites/directory.ts'
import type { ManagedSites } from './sites/managed.ts'
import type { ConversionPipeline } from './delivery/pipeline.ts'
import type { JobHandle, ScheduledJob } from './jobs/scheduler.ts'
import { formatIssues } from './config/issues.ts'
import { BootError } from './errors.ts'

/** What a plugin's setup receives: the kernel's services, never another plugin. */
export interface PluginContext {
  app: H3
  hooks: DcgateHookable
  config: Readonly<ResolvedConfig>
  orm: MikroORM
  storage: Storage
  /** Seals what is kept encrypted at rest with the server secret (core/secrets/keyring.ts). */
  keyring: Keyring
  registry: Registry
  routes: RouteTable
  /** Checks a private key (`dcp_…`) given some other way than x-dc-key, as the Segment-compatible intake's write key; cached like the guard's. */
  keys: KeyVerifier
  sites: SiteDirectory
  /** Sites made and edited in the dashboard, applied live on every instance (core/sites/managed.ts). */
  managedSites: ManagedSites
  /** Runs a hot statement as a prepared statement with bound parameters (core/db/prepared.ts). */
  prepared: RunPrepared
  /** The delivery pipeline: every intake route hands conversions to it. */
  conversions: ConversionPipeline
  /** Runs `job.run` every `everyMs` from `app:ready` to `app:close`; once across instances unless scope is `instance` (core/jobs/scheduler.ts). */
  schedule: (job: ScheduledJob) => JobHandle
  /** Logs an error without personal data and hands it to the `error` hook; never throws, never rejects. */
  report: (error: unknown, context: ErrorContext) => void
  logger: ConsolaInstance
}

export interface PluginDefinition<O = any> {
  /** Stable name, used in the config's `plugins` list. */
  name: string
  /** Plugins that must appear earlier in the config's `plugins` list. */
  dependencies?: readonly string[]
  /** Entities this plugin owns; their tables come from the committed migrations. */
  entities?: readonly EntitySchema[]
  /**
   * The plugin's own config section, a valibot schema: the top-level key named by the camelCase of `name`
   * (`capture`, `emailRisk` for `email-risk`). Validated at boot with path-named errors; setup gets the output.
   */
  options?: v.GenericSchema<unknown, O>
  setup: (ctx: PluginContext, options: O) => void | Promise<void>
}

/** Plugins by the name the config's `plugins` list uses (the entry point's built-in list). */
export type PluginCatalog = Readonly<Record<string, PluginDefinition>>

export function definePlugin<O = undefined>(definition: PluginDefinition<O>): PluginDefinition<O> {
  return definition
}

/** The top-level config key holding a plugin's options: `email-risk` → `emailRisk`. */
export function pluginSection(name: string): string {
  return name.replace(/[-_]+([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
}

/**
 * Validates the config sections that belong to plugins: every known plugin's section (its defaults when absent);
 * a top-level key no plugin owns is reported as misspelt. Returns the validated sections and the problems.
 */
export function resolvePluginSections(
  extra: Readonly<Record<string, unknown>>, plugins: readonly PluginDefinition[],
): { sections: Record<string, unknown>, problems: string[] } {
  const bySection = new Map<string, PluginDefinition>()
  for (const plugin of plugins) if (plugin.options) bySection.set(pluginSection(plugin.name), plugin)
  const sections: Record<string, unknown> = {}
  const problems: string[] = []
  for (const key of Object.keys(extra)) {
    if (!bySection.has(key)) problems.push(`${key}: unknown key (check its spelling)`)
  }
  for (const [section, plugin] of bySection) {
    const raw = extra[section] ?? {}
    const result = v.safeParse(plugin.options!, raw)
    if (result.success) sections[section] = result.output
    else problems.push(...formatIssues(result.issues, section))
  }
  return { sections, problems }
}

/**
 * Turns the config's `plugins` list (names or inline definitions) into definitions in config order.
 * Fails boot for an unknown name, a repeat, or a dependency that is absent or listed later.
 */
export function resolvePlugins(list: ResolvedConfig['plugins'], builtIns: PluginCatalog): PluginDefinition[] {
  const entries = list ?? Object.keys(builtIns)
  const resolved: PluginDefinition[] = []
  const seen = new Set<string>()
  for (const entry of entries) {
    const plugin = typeof entry === 'string' ? builtIns[entry] : entry as PluginDefinition
    if (!plugin) throw new BootError(`Unknown plugin "${String(entry)}"`, [`built-in plugins: ${Object.keys(builtIns).join(', ') || '(none)'}`])
    if (seen.has(plugin.name)) throw new BootError(`Plugin "${plugin.name}" is listed twice`)
    for (const dependency of plugin.dependencies ?? []) {
      if (!seen.has(dependency)) {
        const listedLater = entries.some((e) => (typeof e === 'string' ? e : (e as PluginDefinition).name) === dependency)
        throw new BootError(`Plugin "${plugin.name}" depends on "${dependency}"`, [
          listedLater ? `list "${dependency}" before "${plugin.name}" in plugins` : `add "${dependency}" to plugins, before "${plugin.name}"`,
        ])
      }
    }
    seen.add(plugin.name)
    resolved.push(plugin)
  }
  return resolved
}

/** A plugin's validated options: its section of the resolved config, or its defaults when the config had none. */
export function optionsOf(plugin: PluginDefinition, config: Readonly<ResolvedConfig>): unknown {
  if (!plugin.options) return undefined
  const section = (config as unknown as Record<string, unknown>)[pluginSection(plugin.name)]
  if (section !== undefined) return section
  const result = v.safeParse(plugin.options, {})
  if (!result.success) throw new BootError('Invalid configuration', formatIssues(result.issues, pluginSection(plugin.name)))
  return result.output
}

/** Runs each plugin's setup in order with its options; a throwing setup stops boot with the plugin's name. */
export async function runPlugins(plugins: readonly PluginDefinition[], ctx: PluginContext): Promise<void> {
  for (const plugin of plugins) {
    const options = optionsOf(plugin, ctx.config)
    try {
      await plugin.setup({ ...ctx, logger: ctx.logger.withTag(plugin.name) }, options)
    }
    catch (error) {
      throw new BootError(`Plugin "${plugin.name}" failed to set up`, [error instanceof Error ? error.message : String(error)], { cause: error })
    }
  }
}

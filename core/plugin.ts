import type { H3 } from 'h3'
import type { ConsolaInstance } from 'consola'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { EntitySchema } from '@mikro-orm/core'
import type { Storage } from 'unstorage'
import type { DcgateHookable } from './hooks.ts'
import type { ResolvedConfig } from './config/schema.ts'
import type { Registry } from './registry.ts'
import type { RunPrepared } from './db/prepared.ts'
import type { RouteTable } from './http/routes.ts'
import type { SiteDirectory } from './sites/directory.ts'
import type { ConversionPipeline } from './delivery/pipeline.ts'
import { BootError } from './errors.ts'

/** What a plugin's setup receives: the kernel's services, never another plugin. */
export interface PluginContext {
  app: H3
  hooks: DcgateHookable
  config: Readonly<ResolvedConfig>
  orm: MikroORM
  storage: Storage
  registry: Registry
  routes: RouteTable
  sites: SiteDirectory
  /** Runs a hot statement as a prepared statement with bound parameters (core/db/prepared.ts). */
  prepared: RunPrepared
  /** The delivery pipeline: every intake route hands conversions to it. */
  conversions: ConversionPipeline
  logger: ConsolaInstance
}

export interface PluginDefinition {
  /** Stable name, used in the config's `plugins` list. */
  name: string
  /** Plugins that must appear earlier in the config's `plugins` list. */
  dependencies?: readonly string[]
  /** Entities this plugin owns; their tables come from the committed migrations. */
  entities?: readonly EntitySchema[]
  setup: (ctx: PluginContext) => void | Promise<void>
}

export function definePlugin(definition: PluginDefinition): PluginDefinition {
  return definition
}

/**
 * Turns the config's `plugins` list (names or inline definitions) into definitions in config order.
 * Fails boot for an unknown name, a repeat, or a dependency that is absent or listed later.
 */
export function resolvePlugins(
  list: ResolvedConfig['plugins'], builtIns: Readonly<Record<string, PluginDefinition>>,
): PluginDefinition[] {
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

/** Runs each plugin's setup in order; a throwing setup stops boot with the plugin's name. */
export async function runPlugins(plugins: readonly PluginDefinition[], ctx: PluginContext): Promise<void> {
  for (const plugin of plugins) {
    try {
      await plugin.setup({ ...ctx, logger: ctx.logger.withTag(plugin.name) })
    }
    catch (error) {
      throw new BootError(`Plugin "${plugin.name}" failed to set up`, [error instanceof Error ? error.message : String(error)], { cause: error })
    }
  }
}

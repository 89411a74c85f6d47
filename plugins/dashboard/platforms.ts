/** Platforms by the names people know them by ("Google Ads", not `google_ads`): the adapter's `label`. */
import type { PluginContext } from '../../core/plugin.ts'

/** The label of a site's platform adapter, else its configuration name (a platform since removed from the config). */
export function platformLabel(plugin: PluginContext, siteId: string, name: string): string {
  const connection = plugin.registry.forSite(siteId, 'ad-platform').find((c) => c.definition.name === name)
  return connection?.definition.label ?? plugin.registry.get('ad-platform', name)?.label ?? name
}

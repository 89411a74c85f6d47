/**
 * The adapters' start-up checks (`startupCheck` in core/registry.ts): once the app is ready, each configured
 * destination whose adapter has one checks its credentials against what its options ask, and what is missing is
 * logged as a warning naming the site and destination. It never holds the start nor stops a delivery: a platform may
 * be unreachable at start, and its own answer still says what is wrong when a delivery fails.
 */
import type { ConsolaInstance } from 'consola'
import type { AdPlatformDefinition, Registry } from '../registry.ts'

/** A check that has not answered within this long is given up; its destination is not reported. */
const CHECK_TIMEOUT_MS = 15_000

export async function runStartupChecks(registry: Registry, siteIds: readonly string[], logger: Pick<ConsolaInstance, 'warn'>): Promise<void> {
  const checks = siteIds.flatMap((siteId) => registry.forSite(siteId, 'ad-platform').map(async ({ definition, options }) => {
    const platform = definition as AdPlatformDefinition<unknown>
    if (!platform.startupCheck) return
    const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS)
    // No shared cache: a check's token is not the one deliveries use, and must not replace it.
    const cache = { get: async () => null, set: async () => {} }
    try {
      for (const problem of await platform.startupCheck(options, { fetch, cache, signal })) {
        logger.warn(`sites.${siteId}.destinations.${platform.name}: ${problem}`)
      }
    }
    catch (error) {
      logger.warn(`sites.${siteId}.destinations.${platform.name}: the start-up check could not run: ${error instanceof Error ? error.message : String(error)}`)
    }
  }))
  await Promise.all(checks)
}

import type { ResolvedConfig } from '../../../core/config/schema.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { addFirstPartyRoutes } from './ask.ts'
import { createFirstPartyChecker, type FirstPartyChecker } from './state.ts'
import { createDnsResolver, normaliseHost, type DnsResolver } from './verify.ts'

/** capture.scriptHost, else the host of server.cdnUrl, else of server.baseUrl, else localhost. */
export function resolveScriptHost(config: Pick<ResolvedConfig, 'capture' | 'server'>): string {
  if (config.capture.scriptHost) return normaliseHost(config.capture.scriptHost)
  const url = config.server.cdnUrl ?? config.server.baseUrl
  return url ? normaliseHost(new URL(url).hostname) : 'localhost'
}

/** A resolver on capture.dnsServers; a malformed entry stops boot naming it. */
export function resolveDnsResolver(config: Pick<ResolvedConfig, 'capture'>): DnsResolver {
  try {
    return createDnsResolver(config.capture.dnsServers)
  }
  catch (error) {
    throw new TypeError(`capture.dnsServers: each entry must be an IP address or ip:port such as 127.0.0.1:5353 (${error instanceof Error ? error.message : String(error)})`, { cause: error })
  }
}

const installed = new WeakMap<PluginContext, FirstPartyChecker>()

/** The checker installFirstParty made for this plugin context: the capture routes' CORS check asks it. */
export function installedFirstParty(ctx: PluginContext): FirstPartyChecker | undefined {
  return installed.get(ctx)
}

/**
 * First-party serving in one call, for the capture plugin's setup: the checker (first round when the app is
 * ready, periodic re-checks, stopped on close), GET /tls/ask and the admin verify-domain route.
 */
export function installFirstParty(ctx: PluginContext, options: { resolver?: DnsResolver, intervalMs?: number } = {}): FirstPartyChecker {
  const checker = createFirstPartyChecker({
    sites: ctx.sites,
    storage: ctx.storage,
    resolver: options.resolver ?? resolveDnsResolver(ctx.config),
    scriptHost: resolveScriptHost(ctx.config),
    intervalMs: options.intervalMs,
    logger: ctx.logger,
  })
  addFirstPartyRoutes(ctx, checker)
  installed.set(ctx, checker)
  // Not awaited: a slow DNS server must not hold up boot; until the first round ends, no host is verified.
  ctx.hooks.hook('app:ready', () => void checker.start())
  ctx.hooks.hook('app:close', () => checker.stop())
  return checker
}

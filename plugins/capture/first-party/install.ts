import type { ResolvedConfig } from '../../../core/config/schema.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import type { CaptureOptions } from '../options.ts'
import { addFirstPartyRoutes } from './ask.ts'
import { createFirstPartyChecker, scheduleFirstPartyChecks, type FirstPartyChecker } from './state.ts'
import { createDnsResolver, normaliseHost, type DnsResolver } from './verify.ts'

/** capture.scriptHost, else the host of server.cdnUrl, else of server.baseUrl, else localhost. */
export function resolveScriptHost(options: Pick<CaptureOptions, 'scriptHost'>, server: ResolvedConfig['server']): string {
  if (options.scriptHost) return normaliseHost(options.scriptHost)
  const url = server.cdnUrl ?? server.baseUrl
  return url ? normaliseHost(new URL(url).hostname) : 'localhost'
}

/** A resolver on capture.dnsServers; a malformed entry stops boot naming it. */
export function resolveDnsResolver(options: Pick<CaptureOptions, 'dnsServers'>): DnsResolver {
  try {
    return createDnsResolver(options.dnsServers)
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
export function installFirstParty(ctx: PluginContext, options: Pick<CaptureOptions, 'scriptHost' | 'dnsServers'>): FirstPartyChecker {
  const checker = createFirstPartyChecker({
    sites: ctx.sites,
    storage: ctx.storage,
    resolver: resolveDnsResolver(options),
    scriptHost: resolveScriptHost(options, ctx.config.server),
    logger: ctx.logger,
  })
  addFirstPartyRoutes(ctx, checker)
  installed.set(ctx, checker)
  // Not awaited by boot: a slow DNS server must not hold it up; until the first round ends, no host is verified.
  scheduleFirstPartyChecks(ctx.schedule, checker)
  ctx.hooks.hook('app:close', () => checker.stop())
  return checker
}

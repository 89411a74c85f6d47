import { Resolver } from 'node:dns/promises'
import { createSingleFlight, type TtlCache } from '../cache.ts'

/**
 * Whether a domain receives mail: `mx` (MX records), `implicit` (no MX but an address: RFC 5321 §5.1 delivers to
 * it), `none` (the domain does not exist, has a null MX per RFC 7505, or neither MX nor address), `unknown`
 * (timeout, server failure, no network, or a resolver that denies even the canary domain).
 */
export type MailServer = 'mx' | 'implicit' | 'none' | 'unknown'

export interface MxLookupOptions {
  /** ip or ip:port; the system's resolvers when empty. */
  dnsServers: readonly string[]
  timeoutMs: number
  cacheTtlSeconds: number
  unknownTtlSeconds: number
  canaryDomain: string
  cache: TtlCache<MailServer>
}

const CANARY_TTL_MS = 5 * 60_000

export interface MxLookup {
  lookup: (domain: string) => Promise<MailServer>
  /** The cached answer only (no query); undefined when nothing is cached. */
  peek: (domain: string) => Promise<MailServer | undefined>
  /** Cancels queries still running (app:close). */
  close: () => void
}

/** MX lookup with its own resolver, cached per domain; concurrent checks of one domain share one query. Never throws. */
export function createMxLookup(options: MxLookupOptions): MxLookup {
  const resolver = new Resolver({ timeout: options.timeoutMs, tries: 1 })
  if (options.dnsServers.length) resolver.setServers([...options.dnsServers])
  const ask = (domain: string) => withTimeout(mailServerOf(resolver, domain), options.timeoutMs)
  let canary: { ok: boolean, at: number } | undefined
  // A "none" is believed only when the same resolver answers for a domain that certainly receives mail.
  const resolverTellsTruth = async () => {
    if (!canary || Date.now() - canary.at > CANARY_TTL_MS) {
      const answer = await ask(options.canaryDomain)
      canary = { ok: answer === 'mx' || answer === 'implicit', at: Date.now() }
    }
    return canary.ok
  }
  const once = createSingleFlight<MailServer>()
  const lookup = async (domain: string): Promise<MailServer> => {
    let answer = await ask(domain)
    if (answer === 'none' && !(await resolverTellsTruth())) answer = 'unknown'
    await options.cache.set(domain, answer, answer === 'unknown' ? options.unknownTtlSeconds : options.cacheTtlSeconds)
    return answer
  }
  return {
    lookup: async (domain) => (await options.cache.get(domain)) ?? once(domain, () => lookup(domain)),
    peek: (domain) => options.cache.get(domain),
    close: () => resolver.cancel(),
  }
}

async function mailServerOf(resolver: Resolver, domain: string): Promise<MailServer> {
  try {
    const records = await resolver.resolveMx(domain)
    if (records.length === 0) return hasAddress(resolver, domain)
    // Null MX (RFC 7505): a single record whose exchange is the root, "the domain accepts no mail".
    return records.every((r) => r.exchange === '' || r.exchange === '.') ? 'none' : 'mx'
  }
  catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'ENOTFOUND') return 'none'
    if (code === 'ENODATA') return hasAddress(resolver, domain)
    return 'unknown'
  }
}

async function hasAddress(resolver: Resolver, domain: string): Promise<MailServer> {
  const answers = await Promise.allSettled([resolver.resolve4(domain), resolver.resolve6(domain)])
  if (answers.some((a) => a.status === 'fulfilled' && a.value.length > 0)) return 'implicit'
  const codes = answers.map((a) => (a.status === 'rejected' ? (a.reason as { code?: string }).code : 'ENODATA'))
  return codes.every((code) => code === 'ENODATA' || code === 'ENOTFOUND') ? 'none' : 'unknown'
}

function withTimeout(promise: Promise<MailServer>, ms: number): Promise<MailServer> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<MailServer>((resolve) => {
    timer = setTimeout(() => resolve('unknown'), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

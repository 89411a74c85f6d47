import type { Storage } from 'unstorage'
import { createTtlCache } from './cache.ts'
import { createLookupLimit } from './lookup-limit.ts'
import type { EmailRiskOptions } from './options.ts'
import type { EmailInfo } from './result.ts'
import { scoreEmail, type EmailSignals } from './score.ts'
import { loadDomainLists } from './signals/lists.ts'
import { readLocalPart } from './signals/local-part.ts'
import { isReservedDomain } from './signals/reserved.ts'
import { createMxLookup, type MailServer } from './signals/mx.ts'
import { createRdapLookup, type DomainAge } from './signals/rdap.ts'
import { createShapeCounter } from './signals/shapes.ts'

export interface EmailAssessor {
  /**
   * For the private email check: the offline signals, the site's recent shapes, and RDAP + MX (cached per domain,
   * else asked within the timeout while the site's lookups per minute last; past them, tagged lookup_limit_reached).
   */
  live: (siteId: string, email: string) => Promise<EmailInfo>
  /**
   * For identifications from the browser (and emails identified before this plugin ran): every signal that needs no
   * network, including the site's shapes and cached domain answers. Never asks RDAP or DNS; when an answer was
   * needed and not cached, the result is tagged scored_offline, so a later private check completes it.
   */
  offline: (siteId: string, email: string) => Promise<EmailInfo>
  /** Forgets what the shapes kept of this address (an erasure). Domain answers stay: they are not about a person. */
  forget: (siteId: string, email: string) => Promise<void>
  close: () => void
}

/** `email` is already normalised (core/identity normalizeEmail). */
export function createEmailAssessor(storage: Storage, options: EmailRiskOptions): EmailAssessor {
  const lists = loadDomainLists()
  const shared = { timeoutMs: options.timeoutMs, cacheTtlSeconds: options.cacheTtlSeconds, unknownTtlSeconds: options.unknownTtlSeconds }
  const rdap = createRdapLookup({ ...shared, rdapUrl: options.rdapUrl, cache: createTtlCache<DomainAge>(storage, 'rdap') })
  const mx = createMxLookup({ ...shared, dnsServers: options.dnsServers, canaryDomain: options.dnsCanaryDomain, cache: createTtlCache<MailServer>(storage, 'mx') })
  const shapes = createShapeCounter(storage)
  const limit = createLookupLimit(storage, options.lookupsPerMinute)

  /** The signals that need no network; `known` says whether the domain's age and mail server are known already. */
  const offlineSignals = (email: string) => {
    const { local, domain } = splitEmail(email)
    // example.com, shop.test…: no real mailbox; not a provider (email-providers lists example.com), not a typo
    // (shop.test is not shop.de), and nothing to look up.
    const reserved = isReservedDomain(domain)
    const disposable = !reserved && lists.isDisposable(domain)
    const suggestedDomain = reserved ? undefined : lists.suggestDomain(domain)
    // A typo domain listed as a provider (gmial.com is) is not the provider the person meant: it is looked up.
    const freeProvider = !reserved && lists.isFreeProvider(domain) && !suggestedDomain
    const shape = readLocalPart(local, domain)
    const signals: EmailSignals = {
      email, local, domain, reserved, disposable, freeProvider, suggestedDomain,
      gibberish: shape.gibberish,
      bulk: shape.bulkShape,
      plusAddressing: shape.plusAddressing,
      // Free providers receive mail and are old; a disposable domain is blocked whatever its DNS says.
      mailServer: freeProvider ? 'mx' : 'unknown',
      registeredAt: freeProvider ? 'known-old' : null,
      lookups: 'done',
    }
    return { signals, known: reserved || disposable || freeProvider }
  }

  /** The domain's age and mail server: cached answers first; a lookup only when `network` allows and the site's limit lasts. */
  const domainFacts = async (siteId: string, domain: string, network: boolean) => {
    const [age, mailServer] = await Promise.all([rdap.peek(domain), mx.peek(domain)])
    if (age && mailServer) return { age, mailServer, lookups: 'done' as const }
    if (!network) return { age, mailServer, lookups: 'offline' as const }
    if (!(await limit.take(siteId))) return { age, mailServer, lookups: 'limited' as const }
    const [askedAge, askedServer] = await Promise.all([age ?? rdap.lookup(domain), mailServer ?? mx.lookup(domain)])
    return { age: askedAge, mailServer: askedServer, lookups: 'done' as const }
  }

  const assess = async (siteId: string, email: string, network: boolean): Promise<EmailInfo> => {
    const { signals, known } = offlineSignals(email)
    const [repeated, facts] = await Promise.all([
      shapes.record(siteId, signals.local, signals.domain),
      known ? undefined : domainFacts(siteId, signals.domain, network),
    ])
    return scoreEmail({
      ...signals,
      bulk: signals.bulk || repeated,
      registeredAt: facts?.age ? facts.age.registeredAt : signals.registeredAt,
      mailServer: facts?.mailServer ?? signals.mailServer,
      lookups: facts?.lookups ?? 'done',
    }, new Date(), network ? 'live' : 'stored')
  }

  return {
    live: (siteId, email) => assess(siteId, email, true),
    offline: (siteId, email) => assess(siteId, email, false),
    async forget(siteId, email) {
      const { local, domain } = splitEmail(email)
      await shapes.forget(siteId, local, domain)
    },
    close: () => mx.close(),
  }
}

function splitEmail(email: string): { local: string, domain: string } {
  const at = email.lastIndexOf('@')
  return { local: email.slice(0, at), domain: email.slice(at + 1) }
}

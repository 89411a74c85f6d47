import type { Storage } from 'unstorage'
import { createTtlCache } from './cache.ts'
import type { EmailRiskOptions } from './options.ts'
import type { EmailInfo } from './result.ts'
import { scoreEmail, type EmailSignals } from './score.ts'
import { loadDomainLists } from './signals/lists.ts'
import { readLocalPart } from './signals/local-part.ts'
import { createMxLookup, type MailServer } from './signals/mx.ts'
import { createRdapLookup, type DomainAge } from './signals/rdap.ts'
import { createShapeCounter } from './signals/shapes.ts'

export interface EmailAssessor {
  /** Every signal: the offline ones, the site's recent shapes, and RDAP + MX (cached, or asked within the timeout). */
  live: (siteId: string, email: string) => Promise<EmailInfo>
  /** The offline signals and whatever RDAP/MX answers are cached: no lookup is made. */
  offline: (email: string) => Promise<EmailInfo>
  close: () => void
}

/** `email` is already normalised (core/identity normalizeEmail). */
export function createEmailAssessor(storage: Storage, options: EmailRiskOptions): EmailAssessor {
  const lists = loadDomainLists()
  const shared = { timeoutMs: options.timeoutMs, cacheTtlSeconds: options.cacheTtlSeconds, unknownTtlSeconds: options.unknownTtlSeconds }
  const rdap = createRdapLookup({ ...shared, rdapUrl: options.rdapUrl, cache: createTtlCache<DomainAge>(storage, 'rdap') })
  const mx = createMxLookup({ ...shared, dnsServers: options.dnsServers, canaryDomain: options.dnsCanaryDomain, cache: createTtlCache<MailServer>(storage, 'mx') })
  const shapes = createShapeCounter(storage)

  /** The signals that need no network; `known` says whether the domain's age and mail server are known already. */
  const offlineSignals = (email: string) => {
    const at = email.lastIndexOf('@')
    const local = email.slice(0, at)
    const domain = email.slice(at + 1)
    const disposable = lists.isDisposable(domain)
    const suggestedDomain = lists.suggestDomain(domain)
    // A typo domain listed as a provider (gmial.com is) is not the provider the person meant: it is looked up.
    const freeProvider = lists.isFreeProvider(domain) && !suggestedDomain
    const shape = readLocalPart(local, domain)
    const signals: EmailSignals = {
      email, local, domain, disposable, freeProvider, suggestedDomain,
      gibberish: shape.gibberish,
      bulk: shape.bulkShape,
      plusAddressing: shape.plusAddressing,
      // Free providers receive mail and are old; a disposable domain is blocked whatever its DNS says.
      mailServer: freeProvider ? 'mx' : 'unknown',
      registeredAt: freeProvider ? 'known-old' : null,
    }
    return { signals, known: disposable || freeProvider }
  }

  return {
    async live(siteId, email) {
      const { signals, known } = offlineSignals(email)
      const [repeated, age, mailServer] = await Promise.all([
        shapes.record(siteId, signals.local, signals.domain),
        known ? undefined : rdap.lookup(signals.domain),
        known ? undefined : mx.lookup(signals.domain),
      ])
      return scoreEmail({
        ...signals,
        bulk: signals.bulk || repeated,
        registeredAt: age ? age.registeredAt : signals.registeredAt,
        mailServer: mailServer ?? signals.mailServer,
      }, new Date(), 'live')
    },
    async offline(email) {
      const { signals, known } = offlineSignals(email)
      const [age, mailServer] = known ? [] : await Promise.all([rdap.peek(signals.domain), mx.peek(signals.domain)])
      return scoreEmail({
        ...signals,
        registeredAt: age ? age.registeredAt : signals.registeredAt,
        mailServer: mailServer ?? signals.mailServer,
      }, new Date(), 'stored')
    },
    close: () => mx.close(),
  }
}

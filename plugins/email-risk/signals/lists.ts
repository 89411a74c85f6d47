/**
 * The offline domain lists, loaded once: disposable domains (disposable-email-domains: 121k exact domains plus
 * wildcard domains whose every subdomain is disposable), free mail providers (email-providers: `all.json` for the
 * flag, `common.json` as the domains never "corrected"), and typo suggestions (@zootools/email-spell-checker).
 */
import { createRequire } from 'node:module'
import spellChecker from '@zootools/email-spell-checker'

const require = createRequire(import.meta.url)

export interface DomainLists {
  isDisposable: (domain: string) => boolean
  isFreeProvider: (domain: string) => boolean
  /** The corrected domain when `domain` looks like a typo of a popular mail domain, else undefined. */
  suggestDomain: (domain: string) => string | undefined
}

let loaded: DomainLists | undefined

/** Builds the lookup sets on first use (about 60 ms and 15 MB for the disposable list), then shares them. */
export function loadDomainLists(): DomainLists {
  if (loaded) return loaded
  const disposable = new Set(require('disposable-email-domains') as string[])
  const disposableWildcards = new Set(require('disposable-email-domains/wildcard.json') as string[])
  const providers = new Set(require('email-providers/all.json') as string[])
  const commonProviders = new Set(require('email-providers/common.json') as string[])
  const isDisposable = (domain: string) => disposable.has(domain) || parents(domain).some((parent) => disposableWildcards.has(parent))
  loaded = {
    isDisposable,
    // email-providers also lists disposable services (mailinator.com…): those are disposable, not "free".
    isFreeProvider: (domain) => providers.has(domain) && !isDisposable(domain),
    suggestDomain(domain) {
      if (commonProviders.has(domain) || isDisposable(domain)) return undefined
      const suggestion = spellChecker.run({ email: `x@${domain}` })?.domain
      return suggestion && suggestion !== domain ? suggestion : undefined
    },
  }
  return loaded
}

/** `a.b.example.com` → itself and its parents down to two labels: the wildcard list is matched on each. */
function parents(domain: string): string[] {
  const labels = domain.split('.')
  const list: string[] = []
  for (let i = 0; i <= labels.length - 2; i++) list.push(labels.slice(i).join('.'))
  return list
}

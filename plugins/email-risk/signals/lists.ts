/**
 * The offline domain lists, loaded once: disposable domains (disposable-email-domains: 121k exact domains plus
 * wildcard domains whose every subdomain is disposable), free mail providers (email-providers: `all.json` for the
 * flag, `common.json` as the domains never "corrected"), and typo suggestions (@zootools/email-spell-checker).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import spellChecker from '@zootools/email-spell-checker'
import { createDomainSet } from './domain-set.ts'

const require = createRequire(import.meta.url)

export interface DomainLists {
  isDisposable: (domain: string) => boolean
  isFreeProvider: (domain: string) => boolean
  /** The corrected domain when `domain` looks like a typo of a popular mail domain, else undefined. */
  suggestDomain: (domain: string) => string | undefined
}

let loaded: DomainLists | undefined

/** A package's JSON file, parsed without require(), whose cache would keep the parsed array for good. */
function readList(specifier: string): string[] {
  return JSON.parse(readFileSync(require.resolve(specifier), 'utf8')) as string[]
}

/** Builds the lookup sets on first use (about 3 MB for the disposable list: see domain-set.ts), then shares them. */
export function loadDomainLists(): DomainLists {
  if (loaded) return loaded
  const disposable = createDomainSet(readList('disposable-email-domains'))
  const disposableWildcards = new Set(readList('disposable-email-domains/wildcard.json'))
  const providers = new Set(readList('email-providers/all.json'))
  const commonProviders = new Set(readList('email-providers/common.json'))
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

import { createSingleFlight, type TtlCache } from '../cache.ts'

/** A domain's registration date from RDAP; `registeredAt: null` when unknown (no answer, no date, timeout). */
export interface DomainAge { registeredAt: string | null }

export interface RdapLookupOptions {
  rdapUrl: string
  timeoutMs: number
  cacheTtlSeconds: number
  unknownTtlSeconds: number
  cache: TtlCache<DomainAge>
}

/** Second-level labels under which ccTLDs sell names (example.co.uk, shop.com.au): the name is then three labels. */
const SECOND_LEVEL = /^(?:co|com|net|org|gov|edu|ac|ne|or|go|gob|mil|nom|ltd|plc|sch|biz|info)$/

/**
 * The name a registry knows: the last two labels, or three under a ccTLD's second level (mail.shop.co.uk → shop.co.uk).
 * An approximation of the Public Suffix List, which no installed package carries; a miss only makes the age unknown.
 */
export function registrableDomain(domain: string): string {
  const labels = domain.split('.')
  const keep = labels.length >= 3 && labels.at(-1)!.length === 2 && SECOND_LEVEL.test(labels.at(-2)!) ? 3 : 2
  return labels.slice(-keep).join('.')
}

export interface RdapLookup {
  lookup: (domain: string) => Promise<DomainAge>
  /** The cached answer only (no request); undefined when nothing is cached. */
  peek: (domain: string) => Promise<DomainAge | undefined>
}

/**
 * RDAP domain lookup (RFC 9083): GET <rdapUrl>/domain/<name>, the `registration` event's date. Cached per
 * registrable domain (a known date for cacheTtlSeconds, an unknown for unknownTtlSeconds); concurrent checks of one
 * domain share one request. Never throws: a timeout, a network failure or a non-200 answer is an unknown age.
 */
export function createRdapLookup(options: RdapLookupOptions): RdapLookup {
  const base = options.rdapUrl.replace(/\/+$/, '')
  const once = createSingleFlight<DomainAge>()
  const lookup = async (name: string): Promise<DomainAge> => {
    const registeredAt = await fetchRegistration(`${base}/domain/${encodeURIComponent(name)}`, options.timeoutMs)
    const age = { registeredAt }
    await options.cache.set(name, age, registeredAt ? options.cacheTtlSeconds : options.unknownTtlSeconds)
    return age
  }
  return {
    async lookup(domain) {
      const name = registrableDomain(domain)
      return (await options.cache.get(name)) ?? once(name, () => lookup(name))
    },
    peek: (domain) => options.cache.get(registrableDomain(domain)),
  }
}

async function fetchRegistration(url: string, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(url, { headers: { accept: 'application/rdap+json, application/json' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' })
    if (response.status !== 200) {
      await response.body?.cancel()
      return null
    }
    const body = await response.json() as { events?: { eventAction?: unknown, eventDate?: unknown }[] }
    const event = body.events?.find((e) => e.eventAction === 'registration')
    const date = typeof event?.eventDate === 'string' ? new Date(event.eventDate) : undefined
    return date && !Number.isNaN(date.getTime()) ? date.toISOString() : null
  }
  catch {
    return null
  }
}

import { randomBytes } from 'node:crypto'
import { getCookie, type H3Event } from 'h3'
import type { SiteConfig } from '../../../core/config/schema.ts'
import type { FirstPartyChecker } from './state.ts'
import { normaliseHost } from './verify.ts'

/** The server-set visitor id cookie on a first-party host. */
export const VISITOR_COOKIE = 'dc_vid'
/** 400 days: the longest lifetime Chrome keeps (it caps longer ones); Firefox and Safari accept it as is. */
export const VISITOR_COOKIE_MAX_AGE = 400 * 24 * 60 * 60

const VISITOR_ID = /^[A-Za-z0-9_-]{8,64}$/
/** Second-level labels under which a two-label parent is a public suffix (shop.co.uk's parent co.uk). */
const SECOND_LEVEL_SUFFIXES = new Set(['ac', 'co', 'com', 'edu', 'gob', 'gov', 'go', 'ltd', 'mil', 'ne', 'net', 'nic', 'or', 'org', 'plc', 'sch'])

/** The site's firstPartyHost when the checker has verified it; what firstPartyCookie's `host` expects. */
export function verifiedFirstPartyHost(checker: Pick<FirstPartyChecker, 'isVerified'>, site: { config: Pick<SiteConfig, 'firstPartyHost'> }): string | undefined {
  const host = site.config.firstPartyHost
  return host && checker.isVerified(host) ? host : undefined
}

export function newVisitorId(): string {
  return randomBytes(16).toString('base64url')
}

/** The visitor id of the request's dc_vid cookie, when it holds a well-formed one. */
export function visitorIdFromCookie(event: H3Event): string | undefined {
  const value = getCookie(event, VISITOR_COOKIE)
  return value && VISITOR_ID.test(value) ? value : undefined
}

/**
 * The `Set-Cookie` value for the long-lived visitor id, or undefined when the request did not come in on
 * `host` (pass the site's firstPartyHost only once verified: `verifiedFirstPartyHost(checker, site)`).
 * The id is `visitorId` when well-formed, else the one the request's cookie holds, else a new one.
 *
 * HttpOnly (page scripts and third-party tags cannot read it), Secure, SameSite=Lax (sent on top-level
 * navigations to the site, not on third-party embeds). Domain is the parent of the first-party host:
 * t.shop.example sets it for shop.example, so the site's own servers (www., api., checkout.) receive it and
 * can pass the visitor id along with server-side conversions, and it outlives a change of the label. A
 * browser refuses a cookie for a public suffix, so a parent like co.uk (for shop.co.uk) falls back to a
 * host-only cookie. Note Safari (ITP) caps a cookie set by a subdomain whose IP address is far from the
 * main site's to 7 days.
 */
export function firstPartyCookie(event: H3Event, host: string | undefined, visitorId?: string): string | undefined {
  if (!host) return undefined
  const firstParty = normaliseHost(host)
  if (normaliseHost(event.url.hostname) !== firstParty) return undefined
  const id = visitorId && VISITOR_ID.test(visitorId) ? visitorId : visitorIdFromCookie(event) ?? newVisitorId()
  const domain = cookieDomain(firstParty)
  return [
    `${VISITOR_COOKIE}=${id}`,
    `Max-Age=${VISITOR_COOKIE_MAX_AGE}`,
    ...(domain ? [`Domain=${domain}`] : []),
    'Path=/',
    'HttpOnly',
    'Secure',
    'SameSite=Lax',
  ].join('; ')
}

/** The parent domain of a first-party host, or undefined when that would be (or look like) a public suffix. */
export function cookieDomain(host: string): string | undefined {
  const labels = normaliseHost(host).split('.')
  if (labels.length < 3) return undefined
  const parent = labels.slice(1)
  if (parent.length === 2 && parent[1]!.length === 2 && SECOND_LEVEL_SUFFIXES.has(parent[0]!)) return undefined
  return parent.join('.')
}

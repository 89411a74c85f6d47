/**
 * User agent → browser, OS, platform (bowser, MIT) and the bot pattern it matches (isbot, Unlicense). Parsing costs
 * about 8 µs; a visit's user agent repeats on every hit and across visitors, so results are kept in an LRU.
 */
import Bowser from 'bowser'
import { isbotMatch } from 'isbot'
import { LRUCache } from 'lru-cache'
import type { Platform } from './types.ts'
import { growingBound } from '../../../core/growing-lru.ts'

export interface UaFacts {
  browser?: string
  browserVersion?: string
  os?: string
  osVersion?: string
  platform?: Platform
  /** The part of the UA that isbot matched, as a short code: 'google', 'headless', 'curl'. */
  botToken?: string
}

const PLATFORMS = new Set<string>(['desktop', 'mobile', 'tablet', 'tv', 'bot'])
/** Longer user agents are parsed every time instead of filling the cache with junk keys. */
const MAX_CACHED_LENGTH = 512

/** "curl/8.5.0" → "curl", "Googlebot/2.1" → "googlebot", "Headless" → "headless". */
export function toBotToken(match: string): string {
  const token = match.split('/')[0]!.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')
  return token.slice(0, 32) || 'pattern'
}

export function parseUa(ua: string): UaFacts {
  const facts: UaFacts = {}
  const match = isbotMatch(ua)
  if (match) facts.botToken = toBotToken(match)
  let parsed: Bowser.Parser.ParsedResult
  try {
    parsed = Bowser.parse(ua)
  } catch {
    if (facts.botToken) facts.platform = 'bot'
    return facts // bowser refuses some inputs; the bot verdict above still stands
  }
  if (parsed.browser.name) facts.browser = parsed.browser.name
  if (parsed.browser.version) facts.browserVersion = parsed.browser.version
  if (parsed.os.name) facts.os = parsed.os.name
  if (parsed.os.version) facts.osVersion = parsed.os.version
  const type = parsed.platform.type
  if (type && PLATFORMS.has(type)) facts.platform = type as Platform
  if (facts.botToken) facts.platform = 'bot' // HeadlessChrome, curl: a bot, whatever device it claims
  return facts
}

export function createUaParser(max = 5_000): (ua: string) => UaFacts {
  const cache = new LRUCache<string, UaFacts>(growingBound(max))
  return (ua) => {
    if (ua.length > MAX_CACHED_LENGTH) return parseUa(ua)
    let facts = cache.get(ua)
    if (!facts) {
      facts = parseUa(ua)
      cache.set(ua, facts)
    }
    return facts
  }
}

/**
 * Is this hit from a bot? Explicit rules, each giving a short stable reason code (listed in README.md). One reason
 * is enough for isBot. The rules are chosen so that a person in a normal browser never trips them: a desktop
 * Chrome on a residential line sends a real user agent, no webdriver flag, no headless hint, and its first
 * interaction comes after the page has loaded.
 */
import type { ClientSignals, HitTiming } from './types.ts'

/** Nobody can interact with a page this soon after navigation start: the script is not even running yet. */
export const IMPOSSIBLE_INTERACTION_MS = 50
/** A form submitted with no pointer, key, scroll or touch event this soon after load was filled by a program. */
export const FAST_FORM_MS = 1_500
/** Headless hints are codes from the tracking script; anything else is cut to this shape. */
const HINT = /[^a-z0-9-]+/g
const MAX_HINTS = 5

export const BOT_RULES = {
  'no-user-agent': 'No User-Agent header, or an empty one: every browser sends one.',
  'ua:<token>': 'isbot matched the user agent; <token> is the matched text, e.g. ua:googlebot, ua:headless, ua:curl.',
  'webdriver': 'navigator.webdriver was true: the browser is driven by Selenium, Playwright, Puppeteer...',
  'headless:<hint>': 'The tracking script saw a sign of a headless browser, e.g. headless:no-window-chrome.',
  'impossible-timing': `Interactions reported before ${IMPOSSIBLE_INTERACTION_MS} ms after navigation start, or after the hit was sent.`,
  'no-interaction-fast': `A form was submitted with no interaction at all, less than ${FAST_FORM_MS} ms after load.`,
  'datacenter-ip': 'The address belongs to a cloud or hosting network (range list or hosting ASN), and is not a known VPN, proxy or Tor exit.',
} as const

export interface BotInput {
  userAgent?: string
  /** From parseUa: isbot's match as a short code. */
  uaBotToken?: string
  signals?: ClientSignals
  timing?: HitTiming
  isHosting: boolean
  /** Known VPN, proxy or Tor: people who chose privacy, not machines; their hosting address is not held against them. */
  isPrivacyNetwork: boolean
}

function headlessReasons(hints: readonly string[]): string[] {
  const reasons: string[] = []
  for (const hint of hints.slice(0, MAX_HINTS)) {
    const code = hint.toLowerCase().replace(HINT, '-').replace(/^-+|-+$/g, '').slice(0, 32)
    if (code && !reasons.includes(`headless:${code}`)) reasons.push(`headless:${code}`)
  }
  return reasons
}

function timingReasons(signals: ClientSignals, timing: HitTiming | undefined): string[] {
  const { interactions, firstInteractionMs, sinceLoadMs } = signals
  const reasons: string[] = []
  if (interactions !== undefined && interactions > 0) {
    const tooEarly = firstInteractionMs !== undefined
      ? firstInteractionMs < IMPOSSIBLE_INTERACTION_MS
      : sinceLoadMs !== undefined && sinceLoadMs < IMPOSSIBLE_INTERACTION_MS
    const afterHit = firstInteractionMs !== undefined && sinceLoadMs !== undefined && firstInteractionMs > sinceLoadMs
    if (tooEarly || afterHit) reasons.push('impossible-timing')
  }
  if (timing?.kind === 'form' && interactions === 0 && sinceLoadMs !== undefined && sinceLoadMs < FAST_FORM_MS) {
    reasons.push('no-interaction-fast')
  }
  return reasons
}

/** Every rule that fires, in the order of BOT_RULES. */
export function botReasons(input: BotInput): string[] {
  const reasons: string[] = []
  if (!input.userAgent?.trim()) reasons.push('no-user-agent')
  if (input.uaBotToken) reasons.push(`ua:${input.uaBotToken}`)
  const signals = input.signals
  if (signals?.webdriver === true) reasons.push('webdriver')
  if (signals?.headless?.length) reasons.push(...headlessReasons(signals.headless))
  if (signals) reasons.push(...timingReasons(signals, input.timing))
  if (input.isHosting && !input.isPrivacyNetwork) reasons.push('datacenter-ip')
  return reasons
}

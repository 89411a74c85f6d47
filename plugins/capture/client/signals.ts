/** Bot signals: what a real browser with a person in front of it gets right. */
import type { InferInput } from 'valibot'
import type { BotSignals } from '../protocol.ts'

export type Signals = InferInput<typeof BotSignals>

export interface Environment {
  ua: string
  plugins?: number
  languages?: number
  outerWidth: number
  outerHeight: number
  /** `window.chrome` exists. */
  chrome: boolean
  /** PhantomJS / Selenium globals or attributes. */
  automation: boolean
}

/** Hints of a headless or automated browser. Pure. */
export function headlessHints(env: Environment): string[] {
  const hints: string[] = []
  const desktop = !/Mobi|Android/.test(env.ua)
  if (/HeadlessChrome/.test(env.ua)) hints.push('HeadlessChrome-ua')
  if (desktop && env.plugins === 0) hints.push('no-plugins')
  if (env.languages === 0) hints.push('no-languages')
  if (!env.outerWidth && !env.outerHeight) hints.push('zero-outer-size')
  if (/Chrome\//.test(env.ua) && !env.chrome) hints.push('no-window-chrome')
  if (env.automation) hints.push('automation-globals')
  return hints
}

/** Starts counting interactions; the returned function gives the signals for a hit sent now. */
export function watchSignals(): () => Signals {
  let interactions = 0
  let first: number | undefined
  const count = (): void => {
    interactions++
    if (first === undefined) first = Math.round(performance.now())
  }
  for (const type of ['pointerdown', 'keydown', 'scroll', 'touchstart']) addEventListener(type, count, { capture: true, passive: true })

  const w = window as unknown as Record<string, unknown>
  const hints = headlessHints({
    ua: navigator.userAgent,
    plugins: navigator.plugins?.length,
    languages: navigator.languages?.length,
    outerWidth: outerWidth,
    outerHeight: outerHeight,
    chrome: !!w.chrome,
    automation: !!(w._phantom || w.callPhantom || w.__nightmare || document.documentElement.getAttribute('webdriver')),
  })
  return () => {
    const signals: Signals = { interactions, sinceLoadMs: Math.round(performance.now()) }
    if (navigator.webdriver !== undefined) signals.webdriver = navigator.webdriver
    if (hints.length) signals.headless = hints
    if (first !== undefined) signals.firstInteractionMs = first
    return signals
  }
}

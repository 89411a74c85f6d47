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
  const hints: [unknown, string][] = [
    [/HeadlessChrome/.test(env.ua), 'HeadlessChrome-ua'],
    [!/Mobi|Android/.test(env.ua) && env.plugins === 0, 'no-plugins'],
    [env.languages === 0, 'no-languages'],
    [!env.outerWidth && !env.outerHeight, 'zero-outer-size'],
    [/Chrome\//.test(env.ua) && !env.chrome, 'no-window-chrome'],
    [env.automation, 'automation-globals'],
  ]
  return hints.filter(([found]) => found).map(([, hint]) => hint)
}

/** Starts counting interactions; the returned function gives the signals for a hit sent now. */
export function watchSignals(): () => Signals {
  let interactions = 0
  let first: number | undefined
  const now = (): number => Math.round(performance.now())
  const count = (): void => void (interactions++, first ??= now())
  for (const type of ['pointerdown', 'keydown', 'scroll', 'touchstart']) addEventListener(type, count, { capture: true, passive: true })

  const w = window as unknown as Record<string, unknown>
  const nav = navigator
  const headless = headlessHints({
    ua: nav.userAgent,
    plugins: nav.plugins?.length,
    languages: nav.languages?.length,
    outerWidth,
    outerHeight,
    chrome: !!w.chrome,
    automation: !!(w._phantom || w.callPhantom || w.__nightmare || document.documentElement.getAttribute('webdriver')),
  })
  // Absent members are dropped by JSON: webdriver where the browser has none, headless without hints, no interaction yet.
  return () => ({ webdriver: nav.webdriver, headless: headless.length ? headless : undefined, interactions, firstInteractionMs: first, sinceLoadMs: now() })
}

import type { DeliveryFacts } from '../../core/delivery/decide.ts'

/** The facts of a plain mapped conversion to two platforms, with what a test changes. */
export const facts = (over: Partial<DeliveryFacts> = {}): DeliveryFacts => ({
  mapping: { kind: 'mapped', standardEvent: 'Purchase', release: 'immediately' },
  hold: false,
  match: { isBot: false, consent: 'unknown' },
  platforms: ['meta', 'google_ads'],
  trust: 'trusted',
  chosenId: true,
  deliver: 'inline',
  publicGraceSeconds: 120,
  ...over,
})

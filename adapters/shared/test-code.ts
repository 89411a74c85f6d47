import type { TestEventSupport } from '../../core/registry.ts'

/**
 * A test mode switched on by a code the vendor's events screen shows (Meta's and TikTok's test_event_code, Reddit's
 * test_id): the code typed on the Setup page wins over a configured one, as it is the one that screen shows now.
 * Without either, nothing is sent: the event would count as real.
 */
export function codedTestMode<K extends string, O extends { [key in K]?: string }>(field: K, codeLabel: string, needs: string): TestEventSupport<O> {
  return {
    codeLabel,
    options: (options, code) => {
      const value = code ?? options[field]
      return value ? { ...options, [field]: value } : { refused: `${needs}; without it the event would count as real. Nothing was sent.` }
    },
  }
}

import { describe, expect, it } from 'vitest'
import { charactersOf, slowRuns } from './regex-time.ts'

// The detector the route walk relies on (regex.test.ts): it must flag a pattern that backtracks on its own
// characters, such as the underscore trim that once froze the server, and pass the linear ones.
const pattern = (re: RegExp) => ({ source: re.source, flags: re.flags, where: new Set<string>(), longest: 0 })

describe('timing a pattern on inputs built from its own characters', () => {
  it('reads literals, escapes and classes, negated ones included', () => {
    expect(charactersOf('^_+|_+$')).toEqual(['_', 'a', '!'])
    expect(charactersOf('^[^@\\s]+@[^@\\s]+\\.\\w+$')).toEqual(expect.arrayContaining(['@', '.', 'a', ' ']))
    expect(charactersOf('\\u00e9{2,3}x')).toEqual(['é', 'x', 'a', '!'])
  })

  it('flags the quadratic underscore trim and a nested quantifier; passes linear patterns', async () => {
    expect(await slowRuns(pattern(/^_+|_+$/g), 50)).toEqual([expect.objectContaining({ pattern: '/^_+|_+$/g' })])
    expect(await slowRuns(pattern(/^(a+)+$/), 50)).toHaveLength(1)
    expect(await slowRuns(pattern(/\s+$/), 50)).toHaveLength(1)
    for (const linear of [/[^A-Za-z0-9_.:-]+/g, /^[0-9a-f]{64}$/, /:(\w+)/g]) {
      expect(await slowRuns(pattern(linear), 50), linear.source).toEqual([])
    }
  }, 120_000)
})

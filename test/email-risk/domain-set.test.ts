import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { createDomainSet } from '../../plugins/email-risk/signals/domain-set.ts'

const disposable = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('disposable-email-domains'), 'utf8')) as string[]

describe('a domain set', () => {
  it('answers as a Set of the disposable list does, for every listed name and near misses', () => {
    const set = createDomainSet(disposable)
    const reference = new Set(disposable)
    expect(set.size).toBe(reference.size)
    for (const domain of disposable) expect(set.has(domain)).toBe(true)
    const nearMisses = disposable.slice(0, 2000).flatMap((domain) => [`${domain}x`, domain.slice(1), domain.slice(0, -1), `a${domain}`, domain.toUpperCase()])
    for (const domain of nearMisses) expect(set.has(domain), domain).toBe(reference.has(domain))
  })

  it('holds no name twice and finds the first, the last and nothing in an empty set', () => {
    const set = createDomainSet(['b.example', 'a.example', 'c.example', 'a.example'])
    expect(set.size).toBe(3)
    expect(['a.example', 'b.example', 'c.example', 'a.exampl', 'c.examplee', ''].map((domain) => set.has(domain))).toEqual([true, true, true, false, false, false])
    expect(createDomainSet([]).has('a.example')).toBe(false)
  })
})

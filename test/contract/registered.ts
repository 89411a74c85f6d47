/**
 * Every adapter registered in adapters/index.ts must run its kind's contract suite (CONVENTIONS rule 3). The suites
 * of one kind live in `<name>.suite.ts` files of one test folder, loaded by one test file through `runSuites`, so
 * the check is what ran, not what a file's text says: a registered adapter without a suite, or a suite that never
 * calls the contract, fails.
 */
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { adapters } from '../../adapters/index.ts'
import type { AnyDefinition } from '../../core/registry.ts'

export async function runSuites(dir: URL, kind: AnyDefinition['kind'], contractsRun: ReadonlySet<unknown>): Promise<void> {
  const suites = readdirSync(dir).filter((name) => name.endsWith('.suite.ts')).sort()
  for (const suite of suites) await import(new URL(suite, dir).href)
  const registered = adapters.filter((definition) => definition.kind === kind)
  describe(`registered ${kind} adapters`, () => {
    it('each run the shared contract suite', () => {
      expect(registered.length).toBeGreaterThan(0)
      const without = registered.filter((definition) => !contractsRun.has(definition)).map((definition) => definition.name)
      expect(without, `no ${kind} suite in ${dir.pathname} runs the contract for these`).toEqual([])
    })
  })
}

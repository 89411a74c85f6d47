/**
 * Every ad platform registered in adapters/index.ts runs the shared contract suite and its own checks: each one's
 * `<folder>.suite.ts` is loaded here, so registering a platform without a suite fails, and so does a suite that
 * does not run the contract. Run one platform with `-t <name>`, e.g. `-t "contract: meta"`.
 */
import { describe, expect, it } from 'vitest'
import { adapters } from '../../adapters/index.ts'
import type { AdPlatformDefinition } from '../../core/registry.ts'
import { contractsRun } from '../contract/ad-platform.ts'

const platforms = adapters.filter((definition): definition is AdPlatformDefinition<any> => definition.kind === 'ad-platform')
const missing = new Map<string, unknown>()
for (const platform of platforms) {
  const suite = new URL(`./${platform.name.replace(/_/g, '-')}.suite.ts`, import.meta.url)
  await import(suite.href).catch((error: unknown) => missing.set(platform.name, error))
}

describe('registered ad platforms', () => {
  it('each have a suite that runs the shared contract', () => {
    expect(platforms.length).toBeGreaterThan(0)
    for (const platform of platforms) {
      expect(missing.get(platform.name), `test/adapters/${platform.name.replace(/_/g, '-')}.suite.ts could not be loaded`).toBeUndefined()
      expect(contractsRun.has(platform), `${platform.name} does not run testAdPlatform`).toBe(true)
    }
  })
})

import type { AnyDefinition } from '../core/registry.ts'
import meta from './ads/meta/index.ts'
import googleAds from './ads/google-ads/index.ts'

/**
 * Every adapter dcgate ships, registered explicitly (no code generation). A meta-test fails when a
 * folder under adapters/ads, adapters/crm or adapters/sources is missing here.
 */
export const adapters: readonly AnyDefinition[] = [meta, googleAds]

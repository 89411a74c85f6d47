import * as v from 'valibot'
import { strict } from '../../core/config/schema.ts'

/** `release` in the config: how long held conversions wait, and how often CRMs are asked. */
export const ReleaseOptions = strict({
  /** A held conversion not released within this many days expires; a release then answers 404. */
  expireAfterDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(365)), 30),
  /** How often each site's CRM pollers run. */
  pollIntervalSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10)), 300),
})

export type ReleaseOptions = v.InferOutput<typeof ReleaseOptions>

declare module '../../core/config/schema.ts' {
  interface PluginSections { release?: v.InferInput<typeof ReleaseOptions> }
  interface ResolvedPluginSections { release: ReleaseOptions }
}

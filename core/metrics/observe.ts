import type { DeliveryOutcome } from '../delivery/types.ts'
import { wasRepeat } from '../delivery/answer.ts'
import type { ConversionPipeline } from '../delivery/pipeline.ts'
import { metrics } from './registry.ts'

/**
 * One platform call: each event's outcome, and the call's time. A request's events mostly share one outcome: each
 * run of the same outcome is one increment, since prom-client hashes the labels on every call.
 */
export function observeDispatch(platform: string, kind: 'conversion' | 'adjustment', result: { outcomes: readonly DeliveryOutcome[], durationMs: number }): void {
  const { outcomes } = result
  for (let start = 0; start < outcomes.length;) {
    const outcome = outcomes[start]!.status
    let end = start + 1
    while (end < outcomes.length && outcomes[end]!.status === outcome) end++
    metrics.deliveries.inc({ platform, kind, outcome }, end - start)
    start = end
  }
  metrics.deliveryDuration.observe({ platform, kind }, result.durationMs / 1000)
}

/** The pipeline, counting each conversion it answers: accepted (stored) or a duplicate of a stored one. */
export function countingConversions(pipeline: ConversionPipeline): ConversionPipeline {
  return {
    accept: async (site, input, meta) => {
      const result = await pipeline.accept(site, input, meta)
      metrics.conversions.inc({ source: meta.source, outcome: wasRepeat(result) ? 'duplicate' : 'accepted' })
      return result
    },
  }
}

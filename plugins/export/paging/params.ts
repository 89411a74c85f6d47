import * as v from 'valibot'
import { apiError } from '../../../core/http/errors.ts'
import { parseInstant, type Position } from './instant.ts'

/** Spec, "Limits": export page size, default 100, maximum 500; larger values are capped. */
export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 500

const INSTANT_MESSAGE = 'must be an ISO 8601 date or timestamp, e.g. 2026-01-31, 2026-01-31T12:00:00Z or 2026-01-31T14:00:00.5+02:00'

const Instant = (description: string) => v.pipe(
  v.string(),
  v.rawTransform<string, Position>(({ dataset, addIssue, NEVER }) => {
    const position = parseInstant(dataset.value)
    if (position) return position
    addIssue({ message: INSTANT_MESSAGE })
    return NEVER
  }),
  v.description(description),
)

/** since, until and limit of every export list; unknown parameters are ignored. */
export const PageParams = v.object({
  since: v.optional(Instant('Records at or after this time (inclusive); default the beginning. Pass the previous page\'s `next_since` here to continue.')),
  until: v.optional(Instant('Records before this time (exclusive); default now, less a few seconds for records still being written (docs/api/export.md).')),
  limit: v.optional(v.pipe(
    v.string(),
    v.regex(/^\d+$/, `must be a whole number from 1 to ${MAX_LIMIT}`),
    v.transform(Number),
    v.minValue(1, `must be a whole number from 1 to ${MAX_LIMIT}`),
    v.transform((n) => Math.min(n, MAX_LIMIT)),
    v.description(`Page size, default ${DEFAULT_LIMIT}, maximum ${MAX_LIMIT} (larger values are capped).`),
  ), String(DEFAULT_LIMIT)),
})
export type PageParamsOutput = v.InferOutput<typeof PageParams>

/** 400 whose message names the parameter: `since: must be an ISO 8601 date or timestamp, …`. */
export function invalidParams(problems: string[]) {
  const errors = problems.map((p) => p.replace(/^query\./, ''))
  return apiError(400, { message: `Invalid query parameter ${errors.join('; ')}`, errors })
}

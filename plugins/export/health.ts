import * as v from 'valibot'
import type { RunPrepared } from '../../core/db/prepared.ts'
import type { RouteTable } from '../../core/http/routes.ts'
import { countIdentifiedUsers } from './queries/health.ts'

const HealthResponse = v.object({
  success: v.literal(true),
  app_id: v.pipe(v.string(), v.description('The website the key belongs to.')),
  identified_user_count: v.pipe(v.number(), v.integer(), v.description('Identified users stored for the website.')),
})

/** The count is read at most this often per site: the health check stays a request without a database round trip. */
const COUNT_TTL_MS = 5000

/** GET /api/v1/export/health: the site of the key and its identified-user count (the rows the identified-users list pages over). */
export function addHealthRoute(routes: RouteTable, prepared: RunPrepared): void {
  const counts = new Map<string, { value: Promise<number>, at: number }>()
  const identifiedUsers = (siteId: string): Promise<number> => {
    const cached = counts.get(siteId)
    if (cached && Date.now() - cached.at < COUNT_TTL_MS) return cached.value
    const value = countIdentifiedUsers(prepared, siteId)
    counts.set(siteId, { value, at: Date.now() })
    value.catch(() => counts.delete(siteId))
    return value
  }
  routes.add({
    method: 'GET',
    path: '/api/v1/export/health',
    auth: 'key',
    summary: 'Check a private key',
    description: 'Answers 200 with the website the key belongs to; a quick way to test a new key.',
    tags: ['Export'],
    responses: { 200: HealthResponse },
    handler: async (event) => ({ success: true, app_id: event.context.site!.id, identified_user_count: await identifiedUsers(event.context.site!.id) }),
  })
}

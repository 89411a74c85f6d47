import type { PluginContext } from '../../../core/plugin.ts'
import { oneOff, toPerson, type EraseRequest } from './person.ts'
import { count } from './tally.ts'

/**
 * The person's identified-user record is deleted outright: everything in it (email, its hash, risk score and
 * label, device fingerprint, visitor and session ids, country) is about the person, and the export of identified
 * users must no longer list them. Other sites' records of the same email are untouched.
 */
export function addIdentifiedUserEraser(ctx: PluginContext): void {
  const run = oneOff(ctx.prepared)
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    const person = toPerson(request)
    const rows = await run<{ id: string }>(
      `delete from identified_users where site_id = $1 and (email_hash = any($2::text[]) or lower(email) = $3) returning id`,
      [person.siteId, person.exactHashes, person.email],
    )
    count(request, 'identified_users', rows.length)
  })
}

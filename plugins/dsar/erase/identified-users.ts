import type { PluginContext } from '../../../core/plugin.ts'
import { deleteIdentifiedUsers } from '../queries/erase.ts'
import { oneOff } from '../queries/one-off.ts'
import { toPerson, type EraseRequest } from './person.ts'
import { count } from './tally.ts'

/**
 * The person's identified-user record is deleted outright: everything in it (email, its hash, risk score and
 * label, device fingerprint, visitor and session ids, country) is about the person, and the export of identified
 * users must no longer list them. Other sites' records of the same email are untouched.
 */
export function addIdentifiedUserEraser(ctx: PluginContext): void {
  const sql = oneOff(ctx.prepared)
  ctx.hooks.hook('dsar:erase', async (request: EraseRequest) => {
    count(request, 'identified_users', await deleteIdentifiedUsers(sql, toPerson(request)))
  })
}

import type { AdminClient } from '../admin-client.ts'
import { CliError, table, type Output } from '../output.ts'

interface HeldRow { id: string, message_id: string, event: string, email: string | null, status: string, created_at: string, expires_at: string }

const USAGE = 'Usage: dcgate held list --site <id> [--status held|released|dropped|expired] | held drop <id> --site <id>'

/** `dcgate held list|drop`: the qualification gate's held conversions (needs the release plugin). */
export async function heldCommand(client: AdminClient, out: Output, args: string[], options: { site?: string, status?: string }): Promise<void> {
  const [action, id] = args
  if (!options.site) throw new CliError(`--site is required. ${USAGE}`, 2)
  const base = `/sites/${encodeURIComponent(options.site)}/held`
  if (action === 'list') {
    const { held } = await client.request<{ held: HeldRow[] }>('GET', `${base}${options.status ? `?status=${encodeURIComponent(options.status)}` : ''}`)
    out.result(held, () => held.length === 0
      ? 'No conversions in that state.'
      : table([['ID', 'MESSAGE', 'EVENT', 'EMAIL', 'STATUS', 'CAPTURED', 'EXPIRES'],
          ...held.map((h) => [h.id, h.message_id, h.event, h.email ?? '', h.status, h.created_at, h.expires_at])]))
    return
  }
  if (action === 'drop') {
    if (!id) throw new CliError(`Give the held conversion's id. ${USAGE}`, 2)
    await client.request('POST', `${base}/${encodeURIComponent(id)}/drop`)
    out.result({ dropped: id }, () => `Dropped ${id}: it will never be sent.`)
    return
  }
  throw new CliError(USAGE, 2)
}

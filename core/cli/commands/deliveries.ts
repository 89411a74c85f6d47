import type { AdminClient } from '../admin-client.ts'
import { CliError, table, type Output } from '../output.ts'

interface DeliveryRow {
  id: string, message_id: string, event: string, provider: string, status: string, attempts: number, http_status: number | null, error: string | null, created_at: string
  /**
   * `adjustment` for a refund told to the platform; `note`, the rule that shaped a request (a late-qualified lead);
   * `diagnosis`, what the platform said later about a request it took (Google's request status).
   */
  kind?: string, adjustment_type?: string | null, note?: string | null, diagnosis?: string | null
}

const USAGE = 'Usage: dcgate deliveries list --site <id> [--status failed] | deliveries retry <delivery-id> --site <id> | deliveries retry --failed --site <id>'

export async function deliveriesCommand(client: AdminClient, out: Output, args: string[], options: { site?: string, status?: string, failed?: boolean }): Promise<void> {
  const [action, id] = args
  if (!options.site) throw new CliError(`--site is required. ${USAGE}`, 2)
  const base = `/sites/${encodeURIComponent(options.site)}/deliveries`
  if (action === 'list') {
    const { deliveries } = await client.request<{ deliveries: DeliveryRow[] }>('GET', `${base}${options.status ? `?status=${encodeURIComponent(options.status)}` : ''}`)
    out.result(deliveries, () => deliveries.length === 0
      ? 'No deliveries.'
      : table([['ID', 'MESSAGE', 'EVENT', 'PLATFORM', 'STATUS', 'TRIES', 'HTTP', 'ERROR'],
          ...deliveries.map((d) => [d.id, d.message_id, d.kind === 'adjustment' ? `${d.event} refund (${d.adjustment_type})` : d.event, d.provider, d.status, String(d.attempts), String(d.http_status ?? ''), (d.error ?? d.note ?? d.diagnosis ?? '').slice(0, 80)])]))
    return
  }
  if (action === 'retry') {
    if (!id && !options.failed) throw new CliError(`Give a delivery id or --failed. ${USAGE}`, 2)
    const { requeued, refused = [] } = await client.request<{ requeued: string[], refused?: { id: string, reason: string }[] }>('POST', `${base}/retry`, id ? { id } : { failed: true })
    const notRetried = refused.map((r) => `${r.id}: ${r.reason}`)
    out.result(refused.length ? { requeued, refused } : { requeued }, () => [requeued.length === 0
      ? 'No failed deliveries to replay.'
      : `Requeued ${requeued.length} deliver${requeued.length === 1 ? 'y' : 'ies'}; the worker sends them within a few seconds.`, ...notRetried].join('\n'))
    return
  }
  throw new CliError(USAGE, 2)
}

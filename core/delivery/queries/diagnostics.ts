/** The diagnostics job's statements (core/delivery/diagnostics.ts): note a receipt, claim due looks, save what was said. */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'

/** A sent delivery whose request the platform will judge later. Times as ISO text. */
export interface NewReceipt { delivery_id: string, site_id: string, provider: string, receipt: string, requested_at: string, due_at: string }

/**
 * Notes the receipts given as JSON in parameter `$n`; a delivery sent again (a replay) starts over with its new request's
 * id. A part of the attempt's record (queries/outbox.ts), so a receipt never costs a statement of its own.
 */
export function receiptsInsert(n: number): string {
  return `insert into delivery_diagnostics (delivery_id, site_id, provider, receipt, requested_at, due_at)
    select x.delivery_id, x.site_id, x.provider, x.receipt, x.requested_at, x.due_at
    from json_to_recordset($${n}::json) as x(delivery_id uuid, site_id text, provider text, receipt text, requested_at timestamptz, due_at timestamptz)
    on conflict (delivery_id) do update set receipt = excluded.receipt, requested_at = excluded.requested_at, due_at = excluded.due_at,
      diagnosis = null, updated_at = now()`
}

/** A look that is due, with its delivery. */
export interface DueDiagnosis {
  delivery_id: string, site_id: string, provider: string, receipt: string, requested_at: Date | string
  conversion_id: string, status: string
}

/**
 * $1 at most this many requests (receipts), $2 lease in seconds. Claims the due looks of the requests due longest
 * (any instance, never two at once: skip locked), moving them a lease ahead so a crashed look is taken up again.
 */
const CLAIM_DUE: PreparedStatement = {
  name: 'dcgate_claim_due_diagnoses_v1',
  reusePlan: false,
  text: `update delivery_diagnostics g set due_at = now() + make_interval(secs => $2::int), updated_at = now()
    from deliveries d
    where d.id = g.delivery_id and g.delivery_id in (
      select delivery_id from delivery_diagnostics where due_at <= now() and receipt in (
        select receipt from delivery_diagnostics where due_at <= now() group by receipt order by min(due_at) limit $1)
      for update skip locked)
    returning g.delivery_id, g.site_id, g.provider, g.receipt, g.requested_at, d.conversion_id, d.status`,
}

export function claimDueDiagnoses(prepared: RunPrepared, receipts: number, leaseSeconds: number): Promise<DueDiagnosis[]> {
  return prepared<DueDiagnosis>(CLAIM_DUE, [receipts, leaseSeconds])
}

/** What a look found: the next look (null when final), the report's words, and for a delayed rejection the error. */
export interface DiagnosisUpdate { delivery_id: string, due_at: string | null, diagnosis: string | null, failed: string | null }

/**
 * $1 the updates as JSON. Keeps the last words when a look has none; a delayed rejection turns a `sent` delivery
 * `failed` with the platform's words (a delivery that has since moved on is left as it is).
 */
const SAVE: PreparedStatement = {
  name: 'dcgate_save_diagnoses_v1',
  text: `with v as (
      select * from json_to_recordset($1::json) as x(delivery_id uuid, due_at timestamptz, diagnosis text, failed text)
    ), g as (
      update delivery_diagnostics g set due_at = v.due_at, diagnosis = coalesce(v.diagnosis, g.diagnosis), updated_at = now()
      from v where g.delivery_id = v.delivery_id returning g.delivery_id
    )
    update deliveries d set status = 'failed', error = v.failed, updated_at = now()
    from v where d.id = v.delivery_id and v.failed is not null and d.status = 'sent'`,
}

export async function saveDiagnoses(prepared: RunPrepared, updates: readonly DiagnosisUpdate[]): Promise<void> {
  if (updates.length) await prepared(SAVE, [JSON.stringify(updates)])
}

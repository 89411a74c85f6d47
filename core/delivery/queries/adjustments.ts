/** Refunds told to the platforms (core/delivery/adjust.ts): the conversions' own deliveries, and the adjustment rows. */
import type { PreparedStatement, RunPrepared } from '../../db/prepared.ts'
import type { StoredAdjustment } from './outbox.ts'

/** A conversion's own delivery to one platform, with what a refund of it needs to know. */
export interface DeliveredConversion {
  conversion_id: string
  site_id: string
  provider: string
  status: string
  value: number | null
  currency: string | null
  refunded_value: number | null
}

/**
 * $1 conversion ids. Each conversion's own deliveries (not its adjustments; one an inline attempt still holds, as
 * pending), with the value and what was refunded.
 */
const READ_DELIVERED: PreparedStatement = {
  name: 'dcgate_read_delivered_v2',
  reusePlan: false,
  text: `select d.conversion_id, d.site_id, d.provider, d.status, c.value, c.currency, c.refunded_value
    from all_deliveries d join conversions c on c.id = d.conversion_id
    where d.conversion_id = any($1::uuid[]) and d.kind = 'conversion'`,
}

export function readDelivered(prepared: RunPrepared, conversionIds: readonly string[]): Promise<DeliveredConversion[]> {
  return prepared<DeliveredConversion>(READ_DELIVERED, [[...new Set(conversionIds)]])
}

/** One adjustment row to write: pending (sent once its conversion is), or skipped with the reason. */
export interface NewAdjustment {
  conversion_id: string
  site_id: string
  provider: string
  refund_id: string
  status: 'pending' | 'skipped'
  error: string | null
  adjustment: StoredAdjustment
}

/**
 * $1 the rows as JSON. Writes each refund once per conversion and platform: a retried refund, or the hook called
 * twice, meets the unique key and adds nothing. Answers the ids written.
 */
const INSERT_ADJUSTMENTS: PreparedStatement = {
  name: 'dcgate_insert_adjustments_v1',
  reusePlan: false,
  text: `insert into deliveries (id, conversion_id, site_id, provider, kind, refund_id, status, error, adjustment)
    select gen_random_uuid(), x.conversion_id, x.site_id, x.provider, 'adjustment', x.refund_id, x.status, x.error, x.adjustment
    from json_to_recordset($1::json) as x(conversion_id uuid, site_id text, provider text, refund_id text, status text, error text, adjustment jsonb)
    on conflict (conversion_id, provider, refund_id) do nothing
    returning id`,
}

export async function insertAdjustments(prepared: RunPrepared, rows: readonly NewAdjustment[]): Promise<number> {
  if (rows.length === 0) return 0
  return (await prepared<{ id: string }>(INSERT_ADJUSTMENTS, [JSON.stringify(rows)])).length
}

import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'

/** A deletion request as the dashboard lists it (the dsar plugin's table; never the email, only its masked form). */
export interface DeletionRow {
  code: string
  source: string
  status: string
  masked_email: string
  received_at: string
  completed_at: string | null
  hard_purge_at: string
  purged_at: string | null
}

// Newest first, paged by (received_at, id) below the cursor.
const LIST: PreparedStatement = {
  name: 'dashboard_deletion_list_v1',
  text: `select code, source, status, masked_email, received_at, completed_at, hard_purge_at, purged_at, id from deletion_requests
    where site_id = $1 and ($2::timestamptz is null or (received_at, id) < ($2::timestamptz, $3::uuid))
    order by received_at desc, id desc limit $4`,
}

export async function listDeletionRequests(sql: RunPrepared, siteId: string, limit: number, before?: { at: string, id: string }): Promise<(DeletionRow & { id: string })[]> {
  return sql<DeletionRow & { id: string }>(LIST, [siteId, before?.at ?? null, before?.id ?? null, limit])
}

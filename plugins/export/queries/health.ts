import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'

const IDENTIFIED_USER_COUNT: PreparedStatement = { name: 'dcgate_export_identified_user_count_v1', text: 'select count(*)::int as n from identified_users where site_id = $1' }

export async function countIdentifiedUsers(sql: RunPrepared, siteId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(IDENTIFIED_USER_COUNT, [siteId])
  return row?.n ?? 0
}

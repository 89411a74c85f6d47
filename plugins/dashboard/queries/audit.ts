import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'

export interface AuditRow { id: string, site_id: string | null, actor: string, action: string, detail: string | null, created_at: string }

const INSERT: PreparedStatement = {
  name: 'dashboard_audit_insert_v1',
  text: 'insert into dashboard_audit (site_id, actor, action, detail) values ($1, $2, $3, $4)',
}
// A site's entries, newest first; with $2 true, the sign-ins too (they belong to no site; only the operator sees them).
const LIST: PreparedStatement = {
  name: 'dashboard_audit_list_v1',
  text: `select id, site_id, actor, action, detail, created_at from dashboard_audit
    where site_id = $1 or ($2 and site_id is null) order by created_at desc, id desc limit $3`,
}

export async function insertAudit(sql: RunPrepared, entry: { siteId: string | null, actor: string, action: string, detail?: string }): Promise<void> {
  await sql(INSERT, [entry.siteId, entry.actor.slice(0, 320), entry.action.slice(0, 100), entry.detail?.slice(0, 1000) ?? null])
}

export function listAudit(sql: RunPrepared, siteId: string, withSignIns: boolean, limit: number): Promise<AuditRow[]> {
  return sql<AuditRow>(LIST, [siteId, withSignIns, limit])
}

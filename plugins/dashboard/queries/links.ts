import type { PreparedStatement, RunPrepared } from '../../../core/db/prepared.ts'

/** $1 the token's SHA-256: one row the first time, none after (and claims older than a day are cleared). */
const CLAIM: PreparedStatement = {
  name: 'dashboard_link_claim_v1',
  text: `with cleared as (delete from dashboard_used_links where used_at < now() - interval '1 day')
    insert into dashboard_used_links (token_hash) values ($1) on conflict do nothing returning token_hash`,
}

/** True for the first use of a link, on whichever instance; false for every later one. */
export async function claimLink(sql: RunPrepared, tokenHash: string): Promise<boolean> {
  return (await sql(CLAIM, [tokenHash])).length === 1
}

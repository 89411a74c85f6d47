/** Each site's CRM pollers' turns and cursors (crm_poll_state): one instance polls a given CRM at a time. */
import type { RunPrepared } from '../../../core/db/prepared.ts'
import { oneOff } from './one-off.ts'

/** $1 site, $2 poller. The poller's row, created on its first run. */
const ENSURE_ROW = oneOff(`insert into crm_poll_state (site_id, poller) values ($1, $2) on conflict do nothing`)

/** $1 site, $2 poller, $3 lease in seconds. Takes the poller's turn when it is due and nobody holds it. */
const CLAIM_TURN = oneOff(`update crm_poll_state set locked_until = now() + make_interval(secs => $3::int)
  where site_id = $1 and poller = $2 and next_run_at <= now() and (locked_until is null or locked_until < now())
  returning cursor`)

/** The stored cursor when this instance got the poller's turn (null: none stored yet); undefined when it did not. */
export async function claimPollTurn(prepared: RunPrepared, siteId: string, poller: string, leaseSeconds: number): Promise<{ cursor: string | null } | undefined> {
  await prepared(ENSURE_ROW, [siteId, poller])
  return (await prepared<{ cursor: string | null }>(CLAIM_TURN, [siteId, poller, leaseSeconds]))[0]
}

/** $1 site, $2 poller, $3 new cursor or null to keep it, $4 released count, $5 seconds to the next run. */
const FINISH_TURN = oneOff(`update crm_poll_state set cursor = coalesce($3, cursor), locked_until = null, last_run_at = now(), last_released = $4,
    last_error = null, next_run_at = now() + make_interval(secs => $5::int)
  where site_id = $1 and poller = $2`)

export async function finishPollTurn(
  prepared: RunPrepared, turn: { siteId: string, poller: string, cursor: string | undefined, released: number, nextInSeconds: number },
): Promise<void> {
  await prepared(FINISH_TURN, [turn.siteId, turn.poller, turn.cursor ?? null, turn.released, turn.nextInSeconds])
}

/** $1 site, $2 poller, $3 what failed, $4 seconds to the next run. The cursor stays: the window is polled again. */
const FAIL_TURN = oneOff(`update crm_poll_state set locked_until = null, last_run_at = now(), last_error = $3,
    next_run_at = now() + make_interval(secs => $4::int)
  where site_id = $1 and poller = $2`)

export async function failPollTurn(
  prepared: RunPrepared, turn: { siteId: string, poller: string, error: string, nextInSeconds: number },
): Promise<void> {
  await prepared(FAIL_TURN, [turn.siteId, turn.poller, turn.error, turn.nextInSeconds])
}

/** $1 site, $2 poller. Gives the turn back untouched (shutdown): the next instance polls the same window. */
const FREE_TURN = oneOff(`update crm_poll_state set locked_until = null where site_id = $1 and poller = $2`)

export async function freePollTurn(prepared: RunPrepared, siteId: string, poller: string): Promise<void> {
  await prepared(FREE_TURN, [siteId, poller])
}

/** $1 site, $2 poller, $3 basis. The refresh token the CRM last issued for these configured credentials. */
const READ_ISSUED = oneOff(`select issued_token from crm_poll_state where site_id = $1 and poller = $2 and issued_for = $3`)

export async function readIssuedToken(prepared: RunPrepared, siteId: string, poller: string, basis: string): Promise<string | null> {
  return (await prepared<{ issued_token: string | null }>(READ_ISSUED, [siteId, poller, basis]))[0]?.issued_token ?? null
}

/** $1 site, $2 poller, $3 basis, $4 token. Replaces the stored token (the row exists: the turn created it). */
const STORE_ISSUED = oneOff(`update crm_poll_state set issued_token = $4, issued_for = $3 where site_id = $1 and poller = $2`)

export async function storeIssuedToken(prepared: RunPrepared, siteId: string, poller: string, basis: string, token: string): Promise<void> {
  await prepared(STORE_ISSUED, [siteId, poller, basis, token])
}

/** $1 sites, $2 pollers (pairwise: the configured ones). Forgets the issued tokens of every other one. */
const DROP_UNCONFIGURED_TOKENS = oneOff(`update crm_poll_state s set issued_token = null, issued_for = null
  where issued_token is not null
    and not exists (select 1 from unnest($1::text[], $2::text[]) as c(site_id, poller) where c.site_id = s.site_id and c.poller = s.poller)
  returning site_id, poller`)
const READ_TOKENS = oneOff('select site_id, poller, issued_token from crm_poll_state where issued_token is not null')
/** $1 site, $2 poller, $3 the token as read, $4 the token sealed anew: unless a poll changed it meanwhile. */
const RESEAL_TOKEN = oneOff('update crm_poll_state set issued_token = $4 where site_id = $1 and poller = $2 and issued_token = $3')

export async function dropUnconfiguredTokens(prepared: RunPrepared, configured: readonly { siteId: string, poller: string }[]): Promise<{ site_id: string, poller: string }[]> {
  return prepared(DROP_UNCONFIGURED_TOKENS, [configured.map((c) => c.siteId), configured.map((c) => c.poller)])
}

export async function readStoredTokens(prepared: RunPrepared): Promise<{ site_id: string, poller: string, issued_token: string }[]> {
  return prepared(READ_TOKENS, [])
}

export async function resealToken(prepared: RunPrepared, siteId: string, poller: string, read: string, sealed: string): Promise<void> {
  await prepared(RESEAL_TOKEN, [siteId, poller, read, sealed])
}

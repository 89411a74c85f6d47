import type { PreparedStatement, RunPrepared } from '../db/prepared.ts'

/**
 * $1 job, $2 this instance, $3 lease ms, $4 interval ms, $5 run even if not due. Takes the job's turn when nobody
 * holds it and it is due (or forced); the next due time is set at the claim, so the cadence does not drift by the
 * length of a run. `<=`: a turn freed in the same clock tick (PGlite's clock counts milliseconds) is free.
 */
const CLAIM_JOB: PreparedStatement = {
  name: 'dcgate_claim_job_v2',
  text: `insert into job_leases (name, holder, locked_until, next_run_at)
    values ($1, $2, now() + make_interval(secs => $3::int / 1000.0), now() + make_interval(secs => $4::int / 1000.0))
    on conflict (name) do update set holder = excluded.holder, locked_until = excluded.locked_until, next_run_at = excluded.next_run_at
    where job_leases.locked_until <= now() and (job_leases.next_run_at <= now() or $5::boolean)
    returning name`,
}

/** $1 job, $2 this instance, $3 the failure's class and message (no statement, no values), or null. Frees the turn. */
const FINISH_JOB: PreparedStatement = {
  name: 'dcgate_finish_job_v1',
  text: `update job_leases set locked_until = now(), last_run_at = now(), last_error = $3 where name = $1 and holder = $2`,
}

export async function claimJob(
  prepared: RunPrepared, job: { name: string, holder: string, leaseMs: number, everyMs: number, force: boolean },
): Promise<boolean> {
  const rows = await prepared(CLAIM_JOB, [job.name, job.holder, job.leaseMs, job.everyMs, job.force])
  return rows.length > 0
}

export async function finishJob(prepared: RunPrepared, job: { name: string, holder: string, error: unknown }): Promise<void> {
  await prepared(FINISH_JOB, [job.name, job.holder, job.error === undefined ? null : describe(job.error)])
}

/** What a job's failure was, for the operator: the error's class and first line, kept short (a vendor message may be long). */
function describe(error: unknown): string {
  const name = error instanceof Error ? error.name : 'Error'
  const code = (error as { code?: unknown }).code
  return `${name}${typeof code === 'string' ? ` ${code}` : ''}`.slice(0, 300)
}

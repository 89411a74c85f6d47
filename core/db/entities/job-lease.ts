import { defineEntity, p } from '@mikro-orm/core'

/**
 * One row per cluster-wide scheduled job (core/jobs.ts): who runs it now (until `lockedUntil`), and when it is due
 * again across every instance. Written only by SQL.
 */
export const JobLease = defineEntity({
  name: 'JobLease',
  tableName: 'job_leases',
  properties: {
    name: p.string().length(100).primary(),
    holder: p.string().length(64),
    lockedUntil: p.datetime(6),
    nextRunAt: p.datetime(6),
    lastRunAt: p.datetime(6).nullable(),
    lastError: p.string().length(300).nullable(),
  },
})

import type { TransactionSql } from '../../../core/db/transaction.ts'

/**
 * page_events is partitioned by range of received_at, one partition per UTC day (`page_events_pYYYYMMDD`), plus
 * `page_events_default` for any hit no day partition holds yet, so no hit is ever refused. The migration
 * (Migration20261128130000) made the days of the rows it moved; the `capture:partitions` job makes the days ahead;
 * retention (retention.ts) drops whole days. See docs/architecture.md, "Time-partitioned hits".
 */

export const EVENTS_TABLE = 'page_events'
export const DEFAULT_PARTITION = 'page_events_default'
/** Days made ahead of today, so a partition exists well before its first hit, through a week of job failures. */
export const DAYS_AHEAD = 7
/** How often the job checks (once across instances). */
export const PARTITIONS_EVERY_MS = 3_600_000
/** Two instances making the same day wait for each other instead of failing (any fixed key). */
const PARTITION_LOCK = 740_221_307

const DAY_MS = 86_400_000
const NAME = /^page_events_p(\d{4})(\d{2})(\d{2})$/

export interface DayPartition { name: string, from: Date, to: Date }

/** The day partition holding `at` (UTC days). */
export function dayPartition(at: Date): DayPartition {
  const from = new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS)
  const name = `page_events_p${from.toISOString().slice(0, 10).replaceAll('-', '')}`
  return { name, from, to: new Date(from.getTime() + DAY_MS) }
}

/** A day partition's bounds from its name; undefined for any other table (the default partition). */
export function partitionOfName(name: string): DayPartition | undefined {
  const match = NAME.exec(name)
  return match ? dayPartition(new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00Z`)) : undefined
}

/** The partitions page_events has now, day partitions oldest first (the default one left out). */
export async function listDayPartitions(sql: TransactionSql): Promise<DayPartition[]> {
  const rows = await sql<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = to_regclass($1) order by c.relname`,
    [EVENTS_TABLE],
  )
  return rows.flatMap(({ name }) => partitionOfName(name) ?? [])
}

/**
 * Makes the day partitions of `days` that do not exist yet, in the caller's transaction. Each is made as a table
 * first and then attached: `create table … partition of` would lock page_events against every write while it runs,
 * ATTACH PARTITION takes a lock that lets hits keep arriving. Hits of that day the default partition already took
 * move into it first (an attach refuses while the default holds rows of its range). The bounds' CHECK lets the
 * attach skip scanning the new table. Returns the names made.
 */
export async function makeDayPartitions(sql: TransactionSql, days: readonly Date[]): Promise<string[]> {
  await sql(`select pg_advisory_xact_lock($1)`, [PARTITION_LOCK])
  // A busy table: better to try again at the next run than to queue hits behind a waiting DDL lock.
  await sql(`set local lock_timeout = '5s'`, [])
  const existing = new Set((await listDayPartitions(sql)).map((p) => p.name))
  const made: string[] = []
  for (const { name, from, to } of days.map(dayPartition)) {
    if (existing.has(name) || made.includes(name)) continue
    const [a, b] = [from.toISOString(), to.toISOString()]
    await sql(`create table "${name}" (like "${EVENTS_TABLE}" including defaults)`, [])
    await sql(`alter table "${name}" add constraint "${name}_bounds" check (received_at >= '${a}' and received_at < '${b}')`, [])
    await sql(`with moved as (delete from "${DEFAULT_PARTITION}" where received_at >= '${a}' and received_at < '${b}' returning *)
      insert into "${name}" select * from moved`, [])
    await sql(`alter table "${EVENTS_TABLE}" attach partition "${name}" for values from ('${a}') to ('${b}')`, [])
    await sql(`alter table "${name}" drop constraint "${name}_bounds"`, [])
    made.push(name)
  }
  return made
}

/** Today and the DAYS_AHEAD days after it. */
export function daysAhead(now: Date): Date[] {
  return Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => new Date(now.getTime() + i * DAY_MS))
}

/**
 * The sites with rows in one partition, found by skipping along its (site_id, received_at, id) index: one probe per
 * site instead of a read of every row.
 */
export async function sitesIn(sql: TransactionSql, partition: string): Promise<string[]> {
  const rows = await sql<{ site_id: string }>(
    `with recursive s as (
       (select site_id from "${partition}" order by site_id limit 1)
       union all
       select (select p.site_id from "${partition}" p where p.site_id > s.site_id order by p.site_id limit 1) from s where s.site_id is not null
     ) select site_id from s where site_id is not null`,
    [],
  )
  return rows.map((r) => r.site_id)
}

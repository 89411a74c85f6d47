// What a run makes PostgreSQL do in one database, counted rather than timed (the figures do not depend on how busy
// the machine is): statements by kind (log_statement = all on that database, read back from the server's log),
// rows inserted / updated (HOT or not) / deleted per table with its index count, transactions, and the WAL records
// that touch the database's relations (pg_walinspect). Used by conversion-cost.bench.ts. Beside the counts, the CPU the
// backends spent per statement kind and stage (parse, plan, execute: log_parser/planner/executor_stats, getrusage):
// times, so they move with the machine's load, but they tell where the time goes.
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import pg from 'pg'

/** The server's log file (logging_collector off: pg_ctlcluster's stderr file); BENCH_PG_LOG overrides. */
const LOG_FILE = process.env.BENCH_PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log'

interface TableCounts { ins: number, upd: number, hot: number, del: number, indexes: number }
interface Snapshot { tables: Map<string, TableCounts>, commits: number, lsn: string, logOffset: number }
export interface Cost {
  statements: Map<string, number>, tables: Map<string, TableCounts>, commits: number, walRecords: number, walBytes: number, fpiBytes: number
  /** WAL records by resource manager and type (Btree INSERT_LEAF: one index entry written). */
  walKinds: Map<string, number>
  /** Backend CPU ms by statement kind and stage (`PLANNER`, `EXECUTOR`, …), from the server's log. */
  stageMs: Map<string, Map<string, number>>
}

/** Logs every statement of the database from its next connection on; makes pg_walinspect available in it. */
export async function prepareCounting(url: string): Promise<void> {
  await withClient(url, async (client) => {
    const name = (await client.query<{ db: string }>('select current_database() as db')).rows[0]!.db
    await client.query(`alter database ${name} set log_statement = 'all'`)
    for (const stage of ['parser', 'planner', 'executor']) await client.query(`alter database ${name} set log_${stage}_stats = on`)
    await client.query('create extension if not exists pg_walinspect')
  })
}

export function snapshot(url: string): Promise<Snapshot> {
  return withClient(url, async (client) => {
    await client.query('select pg_stat_force_next_flush()').catch(() => {})
    const tables = await readTables(client)
    const db = (await client.query<{ commits: string, lsn: string }>(`select xact_commit as commits, pg_current_wal_insert_lsn()::text as lsn from pg_stat_database where datname = current_database()`)).rows[0]!
    return { tables, commits: Number(db.commits), lsn: db.lsn, logOffset: logSize() }
  })
}

/** The difference between two snapshots; the WAL between them filtered to this database's relations. */
export function costBetween(url: string, before: Snapshot, after: Snapshot): Promise<Cost> {
  return withClient(url, async (client) => {
    // pg_walinspect reads only flushed WAL. An xid's commit without WAL of its own is not flushed, so wait for the
    // WAL writer (wal_writer_delay) to flush past the end LSN instead.
    for (let i = 0; i < 50; i++) {
      const { rows } = await client.query<{ flushed: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as flushed', [after.lsn])
      if (rows[0]!.flushed) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const kinds = (await client.query<{ kind: string, records: string, bytes: string, fpi: string }>(
      `select resource_manager || ' ' || record_type as kind, count(*) as records, sum(record_length) as bytes, sum(fpi_length) as fpi
       from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
       where block_ref like '%/' || (select oid from pg_database where datname = current_database()) || '/%'
       group by 1`, [before.lsn, after.lsn])).rows
    const sum = (pick: (row: typeof kinds[number]) => string) => kinds.reduce((total, row) => total + Number(pick(row)), 0)
    const database = (await client.query<{ db: string }>('select current_database() as db')).rows[0]!.db
    const tables = new Map<string, TableCounts>()
    for (const [name, now] of after.tables) {
      const was = before.tables.get(name) ?? { ins: 0, upd: 0, hot: 0, del: 0, indexes: now.indexes }
      const delta = { ins: now.ins - was.ins, upd: now.upd - was.upd, hot: now.hot - was.hot, del: now.del - was.del, indexes: now.indexes }
      if (delta.ins || delta.upd || delta.del) tables.set(name, delta)
    }
    const logged = readLogged(database, before.logOffset, after.logOffset)
    return {
      statements: logged.statements, stageMs: logged.stageMs, tables, commits: after.commits - before.commits,
      walRecords: sum((row) => row.records), walBytes: sum((row) => row.bytes), fpiBytes: sum((row) => row.fpi),
      walKinds: new Map(kinds.map((row) => [row.kind, Number(row.records)])),
    }
  })
}

/** The figures per conversion, ready to quote. */
export function printCost(label: string, cost: Cost, conversions: number): void {
  const per = (n: number) => (n / conversions).toFixed(3)
  console.log(`\n${label}: per conversion (${conversions} conversions)`)
  const statements = [...cost.statements].sort((a, b) => b[1] - a[1])
  console.log(`  statements: ${per(statements.reduce((sum, [, n]) => sum + n, 0))}, transactions committed: ${per(cost.commits)}`)
  for (const [kind, n] of statements) console.log(`    ${per(n).padStart(7)}  ${kind}`)
  console.log('  rows per table (inserted / updated, of them HOT / deleted; indexes)')
  for (const [name, t] of [...cost.tables].sort()) console.log(`    ${name.padEnd(26)} ${per(t.ins)} / ${per(t.upd)}, ${per(t.hot)} HOT / ${per(t.del)}; ${t.indexes} indexes`)
  console.log(`  WAL on this database's relations: ${per(cost.walRecords)} records, ${(cost.walBytes / conversions).toFixed(0)} bytes (${(cost.fpiBytes / conversions).toFixed(0)} of them full-page images; commit records are not counted)`)
  for (const [kind, n] of [...cost.walKinds].sort((a, b) => b[1] - a[1])) console.log(`    ${per(n).padStart(7)}  ${kind}`)
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)
  const all = [...cost.stageMs.values()].reduce((sum, m) => sum + total(m), 0)
  console.log(`  backend CPU, ms per conversion (getrusage, moves with the machine's load): ${per(all)}`)
  console.log(`    ${['total', ...STAGES.map(([, label]) => label)].map((label) => label.padStart(7)).join('  ')}  statement`)
  for (const [kind, m] of [...cost.stageMs].sort((a, b) => total(b[1]) - total(a[1]))) {
    console.log(`    ${[total(m), ...STAGES.map(([stage]) => m.get(stage) ?? 0)].map((ms) => per(ms).padStart(7)).join('  ')}  ${kind}`)
  }
}

/** The stages PostgreSQL reports (`<STAGE> STATISTICS`), in their order, with a short label. */
const STAGES = [['PARSER', 'parse'], ['PARSE ANALYSIS', 'analyse'], ['REWRITER', 'rewrite'], ['PLANNER', 'plan'], ['EXECUTOR', 'execute']] as const

async function readTables(client: pg.Client): Promise<Map<string, TableCounts>> {
  const rows = (await client.query<{ relname: string, ins: string, upd: string, hot: string, del: string, indexes: string }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del,
       (select count(*) from pg_index i where i.indrelid = s.relid) as indexes
     from pg_stat_user_tables s`)).rows
  return new Map(rows.map((r) => [r.relname, { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), del: Number(r.del), indexes: Number(r.indexes) }]))
}

/**
 * Statements of `database` the log gained between the offsets, by prepared name or by their first words; and the CPU
 * of each stage of them (a `<STAGE> STATISTICS` message, its `s user, s system` line, then the statement's text).
 */
function readLogged(database: string, from: number, to: number): { statements: Map<string, number>, stageMs: Map<string, Map<string, number>> } {
  const statements = new Map<string, number>()
  const stageMs = new Map<string, Map<string, number>>()
  if (to <= from) return { statements, stageMs }
  const buffer = Buffer.alloc(to - from)
  const fd = openSync(LOG_FILE, 'r')
  try {
    readSync(fd, buffer, 0, buffer.length, from)
  }
  finally {
    closeSync(fd)
  }
  const firstWords = (text: string) => text.trim().split(/\s+/).slice(0, 4).join(' ')
  const lines = buffer.toString('utf8').split('\n')
  // A prepared statement's stages show its text, not its name: the name logged with the same text (its parse comes
  // before its first execute, so the names are gathered first).
  const names = new Map<string, string>()
  for (const line of lines) {
    const named = line.match(new RegExp(`@${database} LOG:  execute ([^<\\s]\\S*?): (.*)$`))
    if (named) names.set(firstWords(named[2]!), named[1]!)
  }
  let stage: { name: string, ms: number } | undefined
  for (const line of lines) {
    const statement = line.match(new RegExp(`@${database} LOG:  (?:execute (\\S+?):|statement:) (.*)$`))
    if (statement) {
      const words = firstWords(statement[2]!)
      const kind = statement[1] && !statement[1].startsWith('<unnamed>') ? statement[1] : words
      statements.set(kind, (statements.get(kind) ?? 0) + 1)
      continue
    }
    const stats = line.match(new RegExp(`@${database} LOG:  ([A-Z ]+) STATISTICS$`))
    if (stats) {
      stage = { name: stats[1]!, ms: 0 }
      continue
    }
    const usage = stage && line.match(/!\s+([\d.]+) s user, ([\d.]+) s system/)
    if (usage) stage!.ms = (Number(usage[1]) + Number(usage[2])) * 1000
    const text = stage && line.match(new RegExp(`@${database} STATEMENT:  (.*)$`))
    if (text) {
      const words = firstWords(text[1]!)
      const kind = names.get(words) ?? words
      const byStage = stageMs.get(kind) ?? new Map<string, number>()
      byStage.set(stage!.name, (byStage.get(stage!.name) ?? 0) + stage!.ms)
      stageMs.set(kind, byStage)
      stage = undefined
    }
  }
  return { statements, stageMs }
}

function logSize(): number {
  try {
    return statSync(LOG_FILE).size
  }
  catch {
    return 0
  }
}

/** A connection of the bench's own, whose statements and their stages the log leaves out (they are no conversion's). */
export function benchClient(url: string): pg.Client {
  return new pg.Client({ connectionString: url, options: '-c log_statement=none -c log_parser_stats=off -c log_planner_stats=off -c log_executor_stats=off' })
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = benchClient(url)
  await client.connect()
  try {
    return await use(client)
  }
  finally {
    await client.end()
  }
}

/**
 * Names for statements whose plan is kept only while the tables it reads stay about the size they were planned at.
 *
 * PostgreSQL plans a named statement on each connection once and keeps that plan until the table's statistics change
 * (autovacuum's analyze, at most once a minute). A plan made while a table was nearly empty scans it whole, which is
 * right at that size, and keeps doing so while the table grows: on a fresh database the record statement kept a
 * sequential scan of 761 blocks a call (docs/architecture.md, "Plans that follow the table"). So such a statement's
 * name carries a generation per table, the binary logarithm of its size in pages: when a table doubles, the name
 * changes and each connection prepares the statement again, planned for the table as it is now. A table has at most
 * about 30 generations, so a connection keeps a bounded number of them.
 */

/** How often the sizes are read again, at most; only while statements that need them run. */
const REFRESH_MS = 1000

/** Reads the tables' sizes in pages (partitions included), in their order. */
export type ReadPages = (tables: readonly string[]) => Promise<number[]>

export interface PlanGenerations {
  /**
   * The name to prepare `name` under, given the tables its plan depends on; undefined while their sizes are not known
   * yet (the statement then runs unnamed, planned for that call). Starts a fresh read of the sizes when the last is
   * older than a second; never waits for it.
   */
  nameFor: (name: string, tables: readonly string[]) => string | undefined
}

export function createPlanGenerations(readPages: ReadPages, now: () => number = Date.now): PlanGenerations {
  const generations = new Map<string, number>()
  const wanted = new Set<string>()
  let readAt = -Infinity
  let reading = false
  const refresh = () => {
    if (reading || now() - readAt < REFRESH_MS) return
    reading = true
    readAt = now()
    const tables = [...wanted]
    readPages(tables).then((pages) => {
      tables.forEach((table, i) => generations.set(table, generationOf(pages[i] ?? 0)))
    }, () => { /* kept as they were: a database that does not answer fails the statement itself */ }).finally(() => {
      reading = false
    })
  }
  return {
    nameFor(name, tables) {
      for (const table of tables) wanted.add(table)
      refresh()
      const suffix: number[] = []
      for (const table of tables) {
        const generation = generations.get(table)
        if (generation === undefined) return undefined
        suffix.push(generation)
      }
      return `${name}_g${suffix.join('_')}`
    },
  }
}

/** 0 for an empty table, then one more each time the page count doubles. */
export function generationOf(pages: number): number {
  return pages < 1 ? 0 : Math.floor(Math.log2(pages)) + 1
}

/**
 * The statement that reads the sizes. pg_partition_tree lists a partitioned table's partitions (its root has no pages)
 * and nothing for a plain table, which pg_relation_size measures; a table that is not there counts 0.
 */
export const READ_PAGES_SQL = `select (coalesce((select sum(pg_relation_size(p.relid)) from pg_partition_tree(r) p), 0) + coalesce(pg_relation_size(r), 0))
    / current_setting('block_size')::float8 as pages
  from unnest($1::text[]) with ordinality as q(t, n), to_regclass(q.t) as r order by q.n`

// What every connection to the SQLite store's database needs, the store's own and the index
// builder's (sqlite-index-build.ts): the function its expression indexes call, and ANALYZE as the
// store keeps its statistics.
import type { Database } from 'better-sqlite3'
import { INSTANT_FUNCTION } from '../query/sql.js'
import { instant } from '../query/values.js'

/** Registers lectern_instant (values.ts `instant` over a SQL value), which date indexes call. */
export function registerFunctions (db: Database): void {
  // Expression indexes call it; it must be trusted inside the schema.
  db.pragma('trusted_schema = ON')
  db.function(INSTANT_FUNCTION, { deterministic: true }, (value: unknown) => (typeof value === 'string' ? instant(value) : null))
}

/**
 * ANALYZE, keeping the per-index averages (sqlite_stat1) only. The value samples of
 * sqlite_stat4 make SQLite re-plan a statement each time a parameter compared with an indexed
 * column is bound anew, which costs more than the lookup itself; list plans are chosen here.
 */
export function analyze (db: Database, table: string | null): void {
  db.exec(table === null ? 'ANALYZE' : `ANALYZE ${table}`)
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat4'").get() !== undefined) {
    db.exec("DELETE FROM sqlite_stat4 WHERE tbl = 'entries'; ANALYZE sqlite_schema")
  }
}

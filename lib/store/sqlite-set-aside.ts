// Rows of the SQLite store that its JSON functions cannot read (issue 28 item 1): data nested
// deeper than SQLite's limit (1,000 levels; json-depth.ts MAX_STORED_DEPTH), or not JSON at all.
// The API never writes such a row (bodies nest 64 levels at most), but a database from before
// that limit may hold one, and a single one would fail every index build, every filter or sort
// on its collection and so the start. At open they are moved, whole, into `entries_set_aside`
// and logged, as the file store skips an entry file it cannot use, and the change log records
// their deletion in the same transaction (`removed`).
//
// Only collections without an expression index can hold one: every index reads the data of every
// row of its collection, so SQLite refuses to build it over such a row, and refuses to write such
// a row into a collection that has one. So the check reads the rows of unindexed collections only.
import type { Database } from 'better-sqlite3'

export interface SetAsideLog {
  warn: (obj: object, msg: string) => void
}

const DDL = `
  CREATE TABLE IF NOT EXISTS entries_set_aside (
    id INTEGER PRIMARY KEY,
    environment TEXT NOT NULL,
    collection TEXT NOT NULL,
    locale TEXT NOT NULL,
    slug TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    data TEXT NOT NULL,
    set_aside_at TEXT NOT NULL,
    reason TEXT NOT NULL
  );`

export interface RowKey {
  environment: string
  collection: string
  /** '' when locales are off. */
  locale: string
  slug: string
}

/** Moves the unreadable rows of unindexed collections aside, calling `removed` for each in the transaction; returns how many. */
export function setAsideUnreadable (db: Database, log: SetAsideLog, now: string, removed: (key: RowKey) => void): number {
  db.exec(DDL)
  const indexed = db.prepare("SELECT DISTINCT substr(name, 4, instr(substr(name, 4), ':') - 1) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' AND name LIKE 'ix:%'")
    .pluck().all() as string[]
  const rows = db.prepare('SELECT id, environment, collection, locale, slug FROM entries WHERE collection NOT IN (SELECT value FROM json_each(?)) AND json_valid(data) = 0')
    .all(JSON.stringify(indexed)) as Array<RowKey & { id: number }>
  if (rows.length === 0) return 0
  const reason = 'not JSON that SQLite can read (nested deeper than 1,000 levels, or malformed)'
  const copy = db.prepare('INSERT OR REPLACE INTO entries_set_aside SELECT id, environment, collection, locale, slug, status, created_at, updated_at, data, ?, ? FROM entries WHERE id = ?')
  const remove = db.prepare('DELETE FROM entries WHERE id = ?')
  const removeSearch = db.prepare('DELETE FROM entry_search WHERE id = ?')
  db.transaction(() => {
    for (const row of rows) {
      copy.run(now, reason, row.id)
      remove.run(row.id)
      removeSearch.run(row.id)
      removed(row)
    }
  })()
  for (const row of rows) {
    log.warn({ environment: row.environment, collection: row.collection, locale: row.locale === '' ? null : row.locale, slug: row.slug, reason },
      'entry set aside into the table entries_set_aside')
  }
  return rows.length
}

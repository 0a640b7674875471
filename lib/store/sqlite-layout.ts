// The SQLite store's side of locales and environments over time (contract §14, layout.ts): at
// open, the layout the database last opened with (meta `layout`) is compared with the settings',
// and the moves between them relabel entries, versions, drafts and schedules, in one IMMEDIATE
// transaction with the change log's records and the new `layout` row: all or nothing, and two
// processes opening together move once (the second finds the new layout).
//
// A clash (the target label already holds the slug): the moved entry wins; the displaced one is
// kept as a version of the key (numbered after the key's highest), the moved entry's versions
// are numbered after that; the moved draft replaces the target's; both entries' schedules keep.
import type { Database, Statement } from 'better-sqlite3'
import { entryChange } from './changes/common.js'
import { layoutMoves, layoutText, parseLayout, type Layout, type LayoutMove } from './layout.js'
import { KEY_SQL, keyParams, type EditorialTables, type EntryKey } from './sqlite-editorial.js'
import type { StoreLogger } from './common.js'
import type { Change } from '../../types/changes.js'
import type { EntryStatus } from '../../types/store.js'

interface MovedRow extends EntryKey {
  id: number
  status: EntryStatus
  updated_at: string
}

interface ClashRow extends MovedRow {
  target: number
  target_status: EntryStatus
  target_data: string
  target_created_at: string
  target_updated_at: string
}

interface MoveCounts {
  entries: number
  clashes: number
  versions: number
  drafts: number
  schedules: number
}

export interface LayoutContext {
  db: Database
  tables: EditorialTables
  /** Records a change in the log (SqliteChangeLog.record), inside the transaction. */
  record: (change: Change) => void
  /** The tombstones' time. */
  at: string
  log: StoreLogger
}

/** Brings the stored content to `current` (the settings' layout) and remembers it. */
export function applyLayout (context: LayoutContext, current: Layout): void {
  const { db, log } = context
  const counts: MoveCounts = { entries: 0, clashes: 0, versions: 0, drafts: 0, schedules: 0 }
  let moves: LayoutMove[] = []
  db.transaction(() => {
    const stored = db.prepare("SELECT value FROM meta WHERE key = 'layout'").pluck().get() as string | undefined
    moves = layoutMoves(parseLayout(stored), current)
    for (const move of moves) moveLabel(context, move, counts)
    if (stored !== layoutText(current)) db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('layout', ?)").run(layoutText(current))
  }).immediate()
  if (Object.values(counts).some(n => n > 0)) {
    log.info({ moves: moves.map(m => `${m.dimension} '${m.from}' → '${m.to}'`), ...counts }, 'stored content moved to the layout of locales and environments')
  }
}

/** One relabelling, in the open transaction. The dimension names its column; the labels are bound. */
function moveLabel (context: LayoutContext, move: LayoutMove, counts: MoveCounts): void {
  const { db } = context
  const col = move.dimension
  const other = col === 'locale' ? 'environment' : 'locale'
  const sameKey = (a: string, b: string): string => `${b}.${col} = ? AND ${b}.${other} = ${a}.${other} AND ${b}.collection = ${a}.collection AND ${b}.slug = ${a}.slug`
  const relabel = (key: EntryKey): EntryKey => ({ ...key, [col]: move.to })

  const clashes = db.prepare(`SELECT m.id, m.environment, m.collection, m.locale, m.slug, m.status, m.updated_at, x.id AS target,
    x.status AS target_status, x.data AS target_data, x.created_at AS target_created_at, x.updated_at AS target_updated_at
    FROM entries m JOIN entries x ON ${sameKey('m', 'x')} WHERE m.${col} = ? ORDER BY m.id`).all(move.to, move.from) as ClashRow[]
  for (const clash of clashes) displace(context, relabel(keyOf(clash)), clash)
  counts.clashes += clashes.length

  // Versions of a key the target label has versions of too: numbered after them. Shifted through
  // negative numbers, since a row shifted onto another row's number would break the unique key.
  const shifted = db.prepare(`SELECT DISTINCT v.environment, v.collection, v.locale, v.slug FROM versions v
    WHERE v.${col} = ? AND EXISTS (SELECT 1 FROM versions x WHERE ${sameKey('v', 'x')})`).all(move.from, move.to) as EntryKey[]
  const highest = db.prepare(`SELECT max(version) FROM versions WHERE ${KEY_SQL}`).pluck()
  const negate = db.prepare(`UPDATE versions SET version = -version - ? WHERE ${KEY_SQL}`)
  const restore = db.prepare(`UPDATE versions SET version = -version WHERE ${KEY_SQL} AND version < 0`)
  for (const key of shifted) {
    const top = highest.get(...keyParams(relabel(key))) as number
    negate.run(top, ...keyParams(key))
    restore.run(...keyParams(key))
  }

  announce(context, move, relabel)
  const run = (sql: string): number => db.prepare(sql).run(move.to, move.from).changes
  counts.entries += run(`UPDATE entries SET ${col} = ? WHERE ${col} = ?`)
  counts.versions += run(`UPDATE versions SET ${col} = ? WHERE ${col} = ?`)
  // The moved draft replaces the target's.
  counts.drafts += run(`UPDATE OR REPLACE drafts SET ${col} = ? WHERE ${col} = ?`)
  counts.schedules += run(`UPDATE schedules SET ${col} = ? WHERE ${col} = ?`)
}

/** The target entry of a clash becomes a version of its key, and makes room for the moved one. */
function displace ({ db, tables }: LayoutContext, target: EntryKey, clash: ClashRow): void {
  tables.addVersion(target, clash.target_status, clash.target_data, clash.target_updated_at, clash.target_created_at)
  db.prepare('DELETE FROM entries WHERE id = ?').run(clash.target)
  db.prepare('DELETE FROM entry_search WHERE id = ?').run(clash.target)
  // A draft entry has no pending draft: the target's one goes with the entry it was of.
  if (clash.status === 'draft') tables.clearDraft(target)
}

/** For each moved entry, a tombstone at its old key and then an upsert at its new one (sync clients see the move). */
function announce ({ db, record, at }: LayoutContext, move: LayoutMove, relabel: (key: EntryKey) => EntryKey): void {
  const select: Statement = db.prepare(`SELECT id, environment, collection, locale, slug, status, updated_at FROM entries
    WHERE ${move.dimension} = ? AND id > ? ORDER BY id LIMIT 1000`)
  for (let after = 0; ;) {
    const rows = select.all(move.from, after) as MovedRow[]
    if (rows.length === 0) return
    for (const row of rows) {
      record(entryChange(changeKey(keyOf(row)), null, at))
      record(entryChange(changeKey(relabel(keyOf(row))), { status: row.status, updatedAt: row.updated_at }, at))
      after = row.id
    }
  }
}

const keyOf = (row: EntryKey): EntryKey => ({ environment: row.environment, collection: row.collection, locale: row.locale, slug: row.slug })
const changeKey = (key: EntryKey): { environment: string, collection: string, locale: string | null, slug: string } =>
  ({ environment: key.environment, collection: key.collection, locale: key.locale === '' ? null : key.locale, slug: key.slug })

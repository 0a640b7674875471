// Asset metadata in SQLite: one table in `<data>/assets.sqlite` (WAL, synchronous=FULL so a
// resolved write survives a power cut). Kept apart from the content database so the asset library
// opens and rebuilds on its own.
import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import Database from '../sqlite-driver.js'
import type { AssetRepository, OpenResult } from './repository.js'
import type { AssetListQuery, AssetListResult, AssetMeta } from './types.js'
import { oldestFirst, pageOfRows, toAssetMeta, toAssetRow, type AssetRow } from './rows.js'

export const SQLITE_FILE = 'assets.sqlite'

interface ListStatements {
  count: Database.Statement
  /** A numbered page: LIMIT, OFFSET. */
  page: Database.Statement
  /** A keyset page (contract §10): the rows after a position (created_at, id), walking the index from there. */
  after: Database.Statement
}

const COLUMNS = 'environment, path, folder, name, size, mime, width, height, created_at'

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS assets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    environment TEXT NOT NULL,
    path TEXT NOT NULL,
    folder TEXT NOT NULL,
    name TEXT NOT NULL,
    size INTEGER NOT NULL,
    mime TEXT NOT NULL,
    width INTEGER,
    height INTEGER,
    created_at TEXT NOT NULL,
    UNIQUE (environment, path)
  );
  CREATE INDEX IF NOT EXISTS assets_newest ON assets (environment, created_at DESC, id DESC);
  CREATE INDEX IF NOT EXISTS assets_folder ON assets (environment, folder, created_at DESC, id DESC);
`

// A replaced record gets a new id, so it sorts as the newest among equal timestamps.
const INSERT = `INSERT OR REPLACE INTO assets (${COLUMNS}) VALUES (@environment, @path, @folder, @name, @size, @mime, @width, @height, @created_at)`

export class SqliteAssetRepository implements AssetRepository {
  readonly kind = 'sqlite' as const
  readonly file: string
  private db: Database.Database | null = null
  private statements: {
    get: Database.Statement<[string, string], AssetRow>
    insert: Database.Statement<AssetRow>
    remove: Database.Statement<[string, string]>
  } | null = null

  /** Prepared list statements by filter combination (at most eight). */
  private readonly listStatements = new Map<string, ListStatements>()

  constructor (dataDir: string) {
    this.file = path.join(dataDir, SQLITE_FILE)
  }

  async open (scan: () => Promise<AssetMeta[]>): Promise<OpenResult> {
    mkdirSync(path.dirname(this.file), { recursive: true })
    const existed = existsSync(this.file)
    const db = new Database(this.file)
    try {
      const result = await this.prepare(db, existed, scan)
      this.db = db
      return result
    } catch (err) {
      db.close()
      throw err
    }
  }

  private async prepare (db: Database.Database, existed: boolean, scan: () => Promise<AssetMeta[]>): Promise<OpenResult> {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    db.pragma('busy_timeout = 5000')
    const hasTable = existed && db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'assets'").get() !== undefined
    // The rebuild scans first and creates the table in the same transaction as its rows, so a
    // failed rebuild leaves no table behind and the next start tries again.
    const metas = hasTable ? null : await scan()
    db.transaction(() => {
      db.exec(SCHEMA)
      if (metas === null) return
      // Oldest first, so ids follow the files' age.
      metas.sort(oldestFirst)
      const insert = db.prepare<AssetRow>(INSERT)
      for (const m of metas) insert.run(toAssetRow(m))
    })()
    this.statements = {
      get: db.prepare<[string, string], AssetRow>(`SELECT ${COLUMNS} FROM assets WHERE environment = ? AND path = ?`),
      insert: db.prepare<AssetRow>(INSERT),
      remove: db.prepare<[string, string]>('DELETE FROM assets WHERE environment = ? AND path = ?')
    }
    const rebuilt = metas === null ? null : 'missing' as const
    const count = (db.prepare('SELECT COUNT(*) AS n FROM assets').get() as { n: number }).n
    return { rebuilt, count }
  }

  async close (): Promise<void> {
    this.db?.close()
    this.db = null
    this.statements = null
    this.listStatements.clear()
  }

  private get ready (): { db: Database.Database, statements: NonNullable<SqliteAssetRepository['statements']> } {
    if (this.db === null || this.statements === null) throw new Error('the asset repository is not open')
    return { db: this.db, statements: this.statements }
  }

  async get (environment: string, assetPath: string): Promise<AssetMeta | undefined> {
    const row = this.ready.statements.get.get(environment, assetPath)
    return row === undefined ? undefined : toAssetMeta(row)
  }

  async list (environment: string, query: AssetListQuery): Promise<AssetListResult> {
    const where: string[] = ['environment = ?']
    const params: Array<string | number> = [environment]
    if (query.folder !== undefined) {
      where.push('folder = ?')
      params.push(query.folder)
    }
    if (query.mime !== undefined) {
      where.push('substr(mime, 1, ?) = ?')
      params.push(query.mime.length, query.mime)
    }
    if (query.q !== undefined) {
      // Names are ASCII (normalized like slugs), where SQLite's lower() is exact.
      where.push('instr(lower(name), ?) > 0')
      params.push(query.q.toLowerCase())
    }
    const statements = this.listStatementsFor(where.join(' AND '))
    const total = (statements.count.get(...params) as { n: number }).n
    // One row more than the page tells whether any match follows it.
    const rows = (query.after === undefined
      ? statements.page.all(...params, query.perPage + 1, (query.page - 1) * query.perPage)
      : statements.after.all(...params, query.after.createdAt, query.after.ordinal, query.perPage + 1)) as Array<AssetRow & { id: number }>
    return pageOfRows(rows, total, query.perPage)
  }

  private listStatementsFor (clause: string): ListStatements {
    const known = this.listStatements.get(clause)
    if (known !== undefined) return known
    const { db } = this.ready
    const order = 'ORDER BY created_at DESC, id DESC LIMIT ?'
    const statements = {
      count: db.prepare(`SELECT COUNT(*) AS n FROM assets WHERE ${clause}`),
      page: db.prepare(`SELECT id, ${COLUMNS} FROM assets WHERE ${clause} ${order} OFFSET ?`),
      // A row value: the index on (environment[, folder], created_at DESC, id DESC) is entered at the position.
      after: db.prepare(`SELECT id, ${COLUMNS} FROM assets WHERE ${clause} AND (created_at, id) < (?, ?) ${order}`)
    }
    this.listStatements.set(clause, statements)
    return statements
  }

  async insert (meta: AssetMeta): Promise<void> {
    this.ready.statements.insert.run(toAssetRow(meta))
  }

  async remove (environment: string, assetPath: string): Promise<boolean> {
    return this.ready.statements.remove.run(environment, assetPath).changes > 0
  }
}

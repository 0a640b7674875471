// Asset metadata in PostgreSQL (CMS_STORE=postgres, contract §12): one table `assets` in the
// store's schema, on the store's pool, shared by every replica (the files stay in CMS_ASSETS_DIR,
// a shared volume). The rows and order of the SQLite backend: unique on (environment, path), an
// ordinal from a sequence that a replaced record takes anew (it sorts as the newest among equal
// times), `created_at` compared byte-wise (COLLATE "C") so ISO times order as SQLite orders them.
import type { PostgresStore } from '../store/postgres.js'
import type { AssetRepository, OpenResult } from './repository.js'
import type { AssetListQuery, AssetListResult, AssetMeta } from './types.js'
import { oldestFirst, pageOfRows, toAssetMeta, type AssetRow } from './rows.js'

/** What the repository needs of the store: its pool, shared rather than a pool of its own. */
export type AssetDatabase = Pick<PostgresStore, 'execute' | 'transaction'>

const SCHEMA = [
  'CREATE SEQUENCE IF NOT EXISTS asset_ordinals',
  `CREATE TABLE IF NOT EXISTS assets (
    id bigint PRIMARY KEY DEFAULT nextval('asset_ordinals'),
    environment text NOT NULL,
    path text NOT NULL,
    folder text NOT NULL,
    name text NOT NULL,
    size bigint NOT NULL,
    mime text NOT NULL,
    width integer,
    height integer,
    created_at text COLLATE "C" NOT NULL,
    UNIQUE (environment, path)
  )`,
  'CREATE INDEX IF NOT EXISTS assets_newest ON assets (environment, created_at DESC, id DESC)',
  'CREATE INDEX IF NOT EXISTS assets_folder ON assets (environment, folder, created_at DESC, id DESC)'
]

// bigint comes back as text from node-postgres: read as numbers (sizes and ordinals stay below 2^53).
const COLUMNS = 'id::float8 AS id, environment, path, folder, name, size::float8 AS size, mime, width, height, created_at'
const INSERT_COLUMNS = 'environment, path, folder, name, size, mime, width, height, created_at'

// A replaced record takes a new ordinal, as SQLite's INSERT OR REPLACE gives it a new row id.
const UPSERT = `INSERT INTO assets (${INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (environment, path) DO UPDATE SET id = nextval('asset_ordinals'), folder = EXCLUDED.folder,
  name = EXCLUDED.name, size = EXCLUDED.size, mime = EXCLUDED.mime, width = EXCLUDED.width,
  height = EXCLUDED.height, created_at = EXCLUDED.created_at`

// A rebuild's rows in one statement, ordinals handed out in the arrays' order (oldest first).
const REBUILD = `INSERT INTO assets (${INSERT_COLUMNS})
  SELECT environment, path, folder, name, size, mime, width, height, created_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::int[], $8::int[], $9::text[])
    WITH ORDINALITY AS r(environment, path, folder, name, size, mime, width, height, created_at, n)
  ORDER BY n`

const values = (m: AssetMeta): unknown[] => [m.environment, m.path, m.folder, m.name, m.size, m.mime, m.width, m.height, m.createdAt]

export class PostgresAssetRepository implements AssetRepository {
  readonly kind = 'postgres' as const
  private opened = false

  constructor (private readonly db: AssetDatabase) {}

  /**
   * Makes the table when missing and fills it from the scan, in one transaction under an advisory
   * lock: replicas starting together take turns, one rebuilds, and a failed scan leaves no table.
   */
  async open (scan: () => Promise<AssetMeta[]>): Promise<OpenResult> {
    const result = await this.db.transaction(async client => {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('lectern:assets:' || current_schema(), 0))")
      const found = await client.query("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'assets'")
      const metas = found.rows.length > 0 ? null : await scan()
      for (const statement of SCHEMA) await client.query(statement)
      if (metas !== null && metas.length > 0) {
        metas.sort(oldestFirst)
        const columns = Array.from({ length: 9 }, (_, i) => metas.map(m => values(m)[i]))
        await client.query(REBUILD, columns)
      }
      const { rows } = await client.query('SELECT count(*)::float8 AS n FROM assets')
      return { rebuilt: metas === null ? null : 'missing' as const, count: (rows[0] as { n: number }).n }
    })
    this.opened = true
    return result
  }

  /** The pool is the store's, closed with it. */
  async close (): Promise<void> {
    this.opened = false
  }

  private check (): void {
    if (!this.opened) throw new Error('the asset repository is not open')
  }

  async get (environment: string, assetPath: string): Promise<AssetMeta | undefined> {
    this.check()
    const { rows } = await this.db.execute(`SELECT ${COLUMNS} FROM assets WHERE environment = $1 AND path = $2`, [environment, assetPath])
    const row = rows[0] as AssetRow | undefined
    return row === undefined ? undefined : toAssetMeta(row)
  }

  /** The page and its total in one REPEATABLE READ transaction, so both describe the same moment. */
  async list (environment: string, query: AssetListQuery): Promise<AssetListResult> {
    this.check()
    const params: unknown[] = [environment]
    const where = ['environment = $1']
    if (query.folder !== undefined) where.push(`folder = $${params.push(query.folder)}`)
    if (query.mime !== undefined) where.push(`starts_with(mime, $${params.push(query.mime)})`)
    // Names are ASCII (normalized like slugs); strpos has no wildcards.
    if (query.q !== undefined) where.push(`strpos(lower(name), $${params.push(query.q.toLowerCase())}) > 0`)
    const filter = where.join(' AND ')
    const pageParams = [...params]
    // One row more than the page tells whether any match follows it.
    const limit = query.perPage + 1
    const pageSql = query.after === undefined
      ? `SELECT ${COLUMNS} FROM assets WHERE ${filter} ORDER BY created_at DESC, id DESC LIMIT $${pageParams.push(limit)} OFFSET $${pageParams.push((query.page - 1) * query.perPage)}`
      : `SELECT ${COLUMNS} FROM assets WHERE ${filter} AND (created_at, id) < ($${pageParams.push(query.after.createdAt)}, $${pageParams.push(query.after.ordinal)})
         ORDER BY created_at DESC, id DESC LIMIT $${pageParams.push(limit)}`
    const { rows, total } = await this.db.transaction(async client => {
      await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
      const page = await client.query(pageSql, pageParams)
      const count = await client.query(`SELECT count(*)::float8 AS n FROM assets WHERE ${filter}`, params)
      return { rows: page.rows as Array<AssetRow & { id: number }>, total: (count.rows[0] as { n: number }).n }
    })
    return pageOfRows(rows, total, query.perPage)
  }

  async insert (meta: AssetMeta): Promise<void> {
    this.check()
    await this.db.execute(UPSERT, values(meta))
  }

  async remove (environment: string, assetPath: string): Promise<boolean> {
    this.check()
    const { rowCount } = await this.db.execute('DELETE FROM assets WHERE environment = $1 AND path = $2', [environment, assetPath])
    return (rowCount ?? 0) > 0
  }
}

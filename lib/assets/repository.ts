// The asset metadata repository: what is known about every file, so listing and lookups never
// scan the disk. Three backends, chosen by CMS_STORE like the content store (see README.md here):
// a table in `<data>/assets.sqlite` for 'sqlite', an atomically rewritten JSON index
// `<data>/assets-index.json` for 'file', a table in the store's database for 'postgres'. When the metadata is missing (first start, or deleted
// to force it), it is rebuilt from the files on disk and the rebuild is logged.
import type { StoreKind } from '../config.js'
import type { AssetListQuery, AssetListResult, AssetMeta } from './types.js'
import { FileAssetRepository } from './file-repository.js'
import { PostgresAssetRepository, type AssetDatabase } from './postgres-repository.js'
import { SqliteAssetRepository } from './sqlite-repository.js'

export interface OpenResult {
  /** Why the metadata was rebuilt from the files on disk, or null when it was loaded. */
  rebuilt: 'missing' | 'unreadable' | null
  /** How many assets the repository holds after opening. */
  count: number
}

export interface AssetRepository {
  readonly kind: StoreKind
  /** Opens the metadata; calls `scan` to rebuild it from the disk when it is missing. */
  open: (scan: () => Promise<AssetMeta[]>) => Promise<OpenResult>
  close: () => Promise<void>
  get: (environment: string, path: string) => Promise<AssetMeta | undefined>
  /** Newest first (ties: the later insert first), filtered and paged. */
  list: (environment: string, query: AssetListQuery) => Promise<AssetListResult>
  /** Durable before it resolves. Replaces a record with the same environment and path. */
  insert: (meta: AssetMeta) => Promise<void>
  /** Durable before it resolves; false when there was no record. */
  remove: (environment: string, path: string) => Promise<boolean>
}

export interface RepositoryOptions {
  dataDir: string
  /** The PostgreSQL store's pool: required for 'postgres', whose records every replica shares. */
  database?: AssetDatabase
}

export function createAssetRepository (kind: StoreKind, options: RepositoryOptions): AssetRepository {
  if (kind === 'file') return new FileAssetRepository(options.dataDir)
  if (kind === 'sqlite') return new SqliteAssetRepository(options.dataDir)
  if (options.database === undefined) throw new Error('the postgres asset repository needs the store\'s database')
  return new PostgresAssetRepository(options.database)
}

/** The filter and order of a list, shared by the file backend and the tests. */
export function matches (meta: AssetMeta, query: AssetListQuery): boolean {
  if (query.folder !== undefined && meta.folder !== query.folder) return false
  if (query.mime !== undefined && !meta.mime.startsWith(query.mime)) return false
  if (query.q !== undefined && !meta.name.toLowerCase().includes(query.q.toLowerCase())) return false
  return true
}

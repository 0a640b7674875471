// What the SQL repositories (sqlite-repository.ts, postgres-repository.ts) share above their SQL:
// an asset's row and its mapping to and from AssetMeta, and how a list page is cut from its rows.
// The order a rebuild inserts in serves every backend (file-repository.ts too).
import type { AssetListResult, AssetMeta } from './types.js'

/** A row of the `assets` table, as both SQL backends write and read it (the ordinal apart): the meta, created_at in SQL's spelling. */
export type AssetRow = Omit<AssetMeta, 'createdAt'> & { created_at: string }

export function toAssetMeta (row: AssetRow): AssetMeta {
  return {
    environment: row.environment,
    path: row.path,
    folder: row.folder,
    name: row.name,
    size: row.size,
    mime: row.mime,
    width: row.width,
    height: row.height,
    createdAt: row.created_at
  }
}

export function toAssetRow (meta: AssetMeta): AssetRow {
  return {
    environment: meta.environment,
    path: meta.path,
    folder: meta.folder,
    name: meta.name,
    size: meta.size,
    mime: meta.mime,
    width: meta.width,
    height: meta.height,
    created_at: meta.createdAt
  }
}

/** A rebuild's order: oldest first (then by path), so ordinals follow the files' age. */
export function oldestFirst (a: AssetMeta, b: AssetMeta): number {
  return a.createdAt.localeCompare(b.createdAt) || a.path.localeCompare(b.path)
}

/**
 * A list's answer from the rows of its page query, which asked for one row more than the page
 * (`perPage + 1`) to tell whether any match follows it. Drops that row from `rows`.
 */
export function pageOfRows (rows: Array<AssetRow & { id: number }>, total: number, perPage: number): AssetListResult {
  const more = rows.length > perPage
  if (more) rows.pop()
  const last = rows.at(-1)
  return { items: rows.map(toAssetMeta), total, next: more && last !== undefined ? { createdAt: last.created_at, ordinal: last.id } : null }
}

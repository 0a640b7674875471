// The asset model shared by the library, the metadata repositories and the transform cache.

/** What the metadata repository keeps for one file. */
export interface AssetMeta {
  environment: string
  /** Relative to the environment's directory: `photos/cat.jpg`. */
  path: string
  /** '' for the root. */
  folder: string
  name: string
  size: number
  mime: string
  width: number | null
  height: number | null
  /** ISO 8601 UTC. */
  createdAt: string
}

/** The asset record of contract §7, as the API returns it. */
export interface AssetRecord {
  /** `/api/assets/<folder/>name` */
  path: string
  /** The public base URL + path (+ `?_environment=<name>` for a non-default environment). */
  url: string
  name: string
  folder: string
  size: number
  mime: string
  width: number | null
  height: number | null
  created_at: string
}

/**
 * Where an asset lies in the list order (newest first, then the later insert first): its time,
 * then its insertion ordinal (the SQLite row id, the file index's `seq`), which never changes.
 */
export interface AssetPosition {
  createdAt: string
  ordinal: number
}

export interface AssetListQuery {
  /** Exact folder ('' = root); undefined for every folder. */
  folder?: string
  /** MIME prefix, such as `image/`. */
  mime?: string
  /** Case-insensitive substring of the name. */
  q?: string
  page: number
  perPage: number
  /** Keyset paging (contract §10): the page starts after this position, and `page` is not used. */
  after?: AssetPosition
}

export interface AssetListResult {
  items: AssetMeta[]
  total: number
  /** The position of the page's last item when more matches follow it, else null. */
  next: AssetPosition | null
}

/** The minimal logger the library needs (pino's methods fit). */
export interface AssetLogger {
  info: (obj: object, msg?: string) => void
  warn: (obj: object, msg?: string) => void
  error: (obj: object, msg?: string) => void
}

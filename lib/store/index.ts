// The storage backend for CMS_STORE: one interface (types/store.ts), three implementations.
import { FileStore } from './file.js'
import { PostgresStore } from './postgres.js'
import { SqliteStore } from './sqlite.js'
import type { StoreOptions } from './common.js'
import type { ContentStore } from '../../types/store.js'

export type { StoreLogger, StoreOptions } from './common.js'
export { FileStore } from './file.js'
export { PostgresStore } from './postgres.js'
export { SqliteStore } from './sqlite.js'

/** A closed store of the given kind; call `open()` before use. */
export function createStore (kind: ContentStore['kind'], options: StoreOptions): ContentStore {
  switch (kind) {
    case 'file': return new FileStore(options)
    case 'sqlite': return new SqliteStore(options)
    case 'postgres': return new PostgresStore(options)
  }
}

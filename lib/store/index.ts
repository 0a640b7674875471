// The storage backend for CMS_STORE: one interface (types/store.ts), two implementations.
import { FileStore } from './file.js'
import { SqliteStore } from './sqlite.js'
import type { StoreOptions } from './common.js'
import type { ContentStore } from '../../types/store.js'

export type { StoreLogger, StoreOptions } from './common.js'
export { FileStore } from './file.js'
export { SqliteStore } from './sqlite.js'

/** A closed store of the given kind; call `open()` before use. */
export function createStore (kind: ContentStore['kind'], options: StoreOptions): ContentStore {
  switch (kind) {
    case 'file': return new FileStore(options)
    case 'sqlite': return new SqliteStore(options)
    // Being built (issue 23): refused until then.
    case 'postgres': throw new Error('the PostgreSQL store is not available in this build')
  }
}

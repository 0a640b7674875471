// The sync key: the HMAC key of sync cursors (cursor.ts), made once per data directory and kept
// in `<data>/sync.key` (64 hex digits, mode 0600), so cursors survive restarts. Each data dir has
// its own, so a cursor of another server is refused. With PostgreSQL several processes, each with
// its own data dir, serve one schema: a cursor from one must work on every other, so the key is
// kept in the database instead (loadSharedSyncSecret), one per schema. Kept as lib/kept-key.ts keeps
// a key; never rotated.
import path from 'node:path'
import { keyFile, keyRow, type KeyDatabase } from '../kept-key.js'

export const SYNC_KEY_FILE = 'sync.key'

/** The data dir's sync key, made (durably) on first use. Throws when the file holds something else. */
export async function loadSyncSecret (dataDir: string): Promise<Buffer> {
  const invalid = `${SYNC_KEY_FILE} in the data directory is not 64 hex digits; remove it to make a new one (open sync cursors then restart with initial=true)`
  return await keyFile(path.join(dataDir, SYNC_KEY_FILE), invalid).load()
}

/** The schema's sync key (the table sync_key), made on first use. */
export async function loadSharedSyncSecret (db: KeyDatabase): Promise<Buffer> {
  const invalid = 'the sync_key table of the database holds no 64 hex digit key; delete its row to make a new one (open sync cursors then restart with initial=true)'
  return await keyRow(db, 'sync_key', invalid).load()
}

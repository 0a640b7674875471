// The sync key: the HMAC key of sync cursors (cursor.ts), made once per data directory and kept
// in `<data>/sync.key` (64 hex digits, mode 0600), so cursors survive restarts. Each data dir has
// its own, so a cursor of another server is refused. With PostgreSQL several processes, each with
// its own data dir, serve one schema: a cursor from one must work on every other, so the key is
// kept in the database instead (loadSharedSyncSecret), one per schema.
import { randomBytes } from 'node:crypto'
import { chmod, readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../durable.js'

export const SYNC_KEY_FILE = 'sync.key'
const KEY_RE = /^[0-9a-f]{64}$/

/** The data dir's sync key, made (durably) on first use. Throws when the file holds something else. */
export async function loadSyncSecret (dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, SYNC_KEY_FILE)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    const secret = randomBytes(32)
    await writeFileAtomic(file, `${secret.toString('hex')}\n`)
    await chmod(file, 0o600)
    return secret
  }
  const hex = text.trim()
  if (!KEY_RE.test(hex)) throw new Error(`${SYNC_KEY_FILE} in the data directory is not 64 hex digits; remove it to make a new one (open sync cursors then restart with initial=true)`)
  return Buffer.from(hex, 'hex')
}

/** What the shared key needs of the database: a transaction on the store's pool (PostgresStore). */
export interface SyncKeyDatabase {
  transaction: <T>(work: (client: { query: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }> }) => Promise<T>) => Promise<T>
}

/**
 * The schema's sync key, made on first use: the first process to insert wins (ON CONFLICT DO
 * NOTHING) and every process reads back the one kept. The advisory lock serializes the CREATE
 * TABLE IF NOT EXISTS of processes starting together, which can otherwise collide in the catalogue.
 */
export async function loadSharedSyncSecret (db: SyncKeyDatabase): Promise<Buffer> {
  const hex = await db.transaction(async client => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended('lectern:sync-key:' || current_schema(), 0))")
    await client.query('CREATE TABLE IF NOT EXISTS sync_key (id smallint PRIMARY KEY CHECK (id = 1), key text NOT NULL)')
    await client.query('INSERT INTO sync_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [randomBytes(32).toString('hex')])
    const { rows } = await client.query('SELECT key FROM sync_key WHERE id = 1')
    return (rows[0] as { key: string } | undefined)?.key ?? ''
  })
  if (!KEY_RE.test(hex)) throw new Error('the sync_key table of the database holds no 64 hex digit key; delete its row to make a new one (open sync cursors then restart with initial=true)')
  return Buffer.from(hex, 'hex')
}

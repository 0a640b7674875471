// A 32-byte HMAC key kept with the data it signs: in a file of the data dir (64 hex digits, mode
// 0600, written durably on first use), or with PostgreSQL in a one-row table of the schema, so
// every process serving that schema signs alike. The sync key (sync/secret.ts) and the session
// secret (session-secret.ts) are kept so; each says in its own words what a bad key means.
import { randomBytes } from 'node:crypto'
import { chmod, readFile } from 'node:fs/promises'
import { writeFileAtomic } from './durable.js'

/** Where a key lives: loaded (made on first use) and replaced by a new one. */
export interface KeptKey {
  load: () => Promise<Buffer>
  rotate: () => Promise<Buffer>
}

/** What a key in the database needs: a transaction on the store's pool (PostgresStore). */
export interface KeyDatabase {
  transaction: <T>(work: (client: { query: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }> }) => Promise<T>) => Promise<T>
}

const KEY_RE = /^[0-9a-f]{64}$/

/** The key of 64 hex digits; else an error saying `invalid`. */
function parse (hex: string, invalid: string): Buffer {
  if (!KEY_RE.test(hex)) throw new Error(invalid)
  return Buffer.from(hex, 'hex')
}

/** The key in `file`; `invalid` is the error when the file holds something else. */
export function keyFile (file: string, invalid: string): KeptKey {
  const write = async (): Promise<Buffer> => {
    const secret = randomBytes(32)
    await writeFileAtomic(file, `${secret.toString('hex')}\n`)
    await chmod(file, 0o600)
    return secret
  }
  return {
    async load () {
      let text: string
      try {
        text = await readFile(file, 'utf8')
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
        return await write()
      }
      return parse(text.trim(), invalid)
    },
    rotate: write
  }
}

/**
 * The key in the one row of `table` in the schema: the first process to insert wins and every
 * process reads back the one kept (a rotation replaces it). The advisory lock serializes the
 * CREATE TABLE IF NOT EXISTS of processes starting together, which can otherwise collide in the
 * catalogue. `invalid` is the error when the row holds no key.
 */
export function keyRow (db: KeyDatabase, table: 'sync_key' | 'session_key', invalid: string): KeptKey {
  // The lock's name: 'lectern:sync-key:' or 'lectern:session-key:', then the schema.
  const lock = `SELECT pg_advisory_xact_lock(hashtextextended('lectern:${table.replace('_', '-')}:' || current_schema(), 0))`
  const upsert = async (replace: boolean): Promise<Buffer> => {
    const hex = await db.transaction(async client => {
      await client.query(lock)
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (id smallint PRIMARY KEY CHECK (id = 1), key text NOT NULL)`)
      const conflict = replace ? 'DO UPDATE SET key = EXCLUDED.key' : 'DO NOTHING'
      await client.query(`INSERT INTO ${table} (id, key) VALUES (1, $1) ON CONFLICT (id) ${conflict}`, [randomBytes(32).toString('hex')])
      const { rows } = await client.query(`SELECT key FROM ${table} WHERE id = 1`)
      return (rows[0] as { key: string } | undefined)?.key ?? ''
    })
    return parse(hex, invalid)
  }
  return { load: async () => await upsert(false), rotate: async () => await upsert(true) }
}

// The session secret: the HMAC key that signs the admin's session cookies (lib/auth.ts). Kept like
// the sync key (lib/sync/secret.ts): in `<data>/session.key` (64 hex digits, mode 0600), or with
// PostgreSQL in the database (one per schema), so every replica accepts every other's cookies.
// Unlike the sync key it is rotated on purpose: a new secret signs every session out everywhere.
import { randomBytes } from 'node:crypto'
import { chmod, readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from './durable.js'
import type { SyncKeyDatabase } from './sync/secret.js'

export const SESSION_KEY_FILE = 'session.key'
const KEY_RE = /^[0-9a-f]{64}$/

/** Where the secret lives: loaded (made on first use) and replaced. */
export interface SessionSecretStore {
  load: () => Promise<Buffer>
  rotate: () => Promise<Buffer>
}

function parse (hex: string, where: string): Buffer {
  if (!KEY_RE.test(hex)) throw new Error(`${where} is not 64 hex digits; remove it to make a new one (every session is then signed out)`)
  return Buffer.from(hex, 'hex')
}

/** The data dir's `session.key`. */
export function fileSessionSecret (dataDir: string): SessionSecretStore {
  const file = path.join(dataDir, SESSION_KEY_FILE)
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
      return parse(text.trim(), `${SESSION_KEY_FILE} in the data directory`)
    },
    rotate: write
  }
}

const LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('lectern:session-key:' || current_schema(), 0))"
const TABLE = 'CREATE TABLE IF NOT EXISTS session_key (id smallint PRIMARY KEY CHECK (id = 1), key text NOT NULL)'

/**
 * The schema's `session_key` row. The advisory lock serializes the CREATE TABLE IF NOT EXISTS of
 * replicas starting together; the first insert wins and everyone reads back the one kept.
 */
export function sharedSessionSecret (db: SyncKeyDatabase): SessionSecretStore {
  const upsert = async (replace: boolean): Promise<Buffer> => {
    const hex = await db.transaction(async client => {
      await client.query(LOCK)
      await client.query(TABLE)
      const conflict = replace ? 'DO UPDATE SET key = EXCLUDED.key' : 'DO NOTHING'
      await client.query(`INSERT INTO session_key (id, key) VALUES (1, $1) ON CONFLICT (id) ${conflict}`, [randomBytes(32).toString('hex')])
      const { rows } = await client.query('SELECT key FROM session_key WHERE id = 1')
      return (rows[0] as { key: string } | undefined)?.key ?? ''
    })
    return parse(hex, 'the session_key row of the database')
  }
  return { load: async () => await upsert(false), rotate: async () => await upsert(true) }
}

// The sync key: the HMAC key of sync cursors (cursor.ts), made once per data directory and kept
// in `<data>/sync.key` (64 hex digits, mode 0600), so cursors survive restarts. Each data dir has
// its own, so a cursor of another server is refused. (A store shared by several processes with
// their own data dirs, PostgreSQL, must share one key: keep it in the database then.)
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

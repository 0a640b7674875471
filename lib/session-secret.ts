// The session secret: the HMAC key that signs the admin's session cookies (lib/auth.ts). Kept like
// the sync key (lib/sync/secret.ts), as lib/kept-key.ts keeps a key: in `<data>/session.key` (64
// hex digits, mode 0600), or with PostgreSQL in the database (one per schema), so every replica
// accepts every other's cookies. Unlike the sync key it is rotated on purpose: a new secret signs
// every session out everywhere.
import path from 'node:path'
import { keyFile, keyRow, type KeptKey, type KeyDatabase } from './kept-key.js'

export const SESSION_KEY_FILE = 'session.key'

/** Where the secret lives: loaded (made on first use) and replaced. */
export type SessionSecretStore = KeptKey

const invalid = (where: string): string => `${where} is not 64 hex digits; remove it to make a new one (every session is then signed out)`

/** The data dir's `session.key`. */
export function fileSessionSecret (dataDir: string): SessionSecretStore {
  return keyFile(path.join(dataDir, SESSION_KEY_FILE), invalid(`${SESSION_KEY_FILE} in the data directory`))
}

/** The schema's `session_key` row. */
export function sharedSessionSecret (db: KeyDatabase): SessionSecretStore {
  return keyRow(db, 'session_key', invalid('the session_key row of the database'))
}

// One server process per data directory. Two processes on one directory would each keep their
// own view of it (the file store's in-memory index, every response cache, the reference index,
// the webhook queue) and overwrite each other's writes; a second container started on the same
// volume is the usual way to get there. With CMS_STORE=postgres the data dir is not locked
// (plugins/data.ts): processes share the database and may share a data dir (contract §12).
//
// The lock is an exclusive SQLite lock on `<data>/lectern.lock`, held by one open connection
// for the life of the process. SQLite takes it with fcntl, so the kernel drops it when the
// process ends, however it ends: a crash or a kill leaves no stale lock to clean up. Processes
// in different containers on one host share the lock through the volume's file (a network file
// system only if it supports POSIX locks), and a second lock in the same process is refused as
// well (SQLite keeps one lock per file per process).
import path from 'node:path'
import Database from './sqlite-driver.js'

export const LOCK_FILE = 'lectern.lock'

export class DataDirLockedError extends Error {
  constructor (readonly dataDir: string) {
    super(`the data directory ${dataDir} is in use by another Lectern process (CMS_DATA_DIR); only one process may use a data directory`)
    this.name = 'DataDirLockedError'
  }
}

export interface DataLock {
  /** Gives the lock up (idempotent). */
  release: () => void
}

/** Takes the data directory's lock, or throws DataDirLockedError while another process (or instance) holds it. */
export function lockDataDir (dataDir: string): DataLock {
  // timeout 0: a held lock answers SQLITE_BUSY at once instead of waiting for it.
  const file = path.join(dataDir, LOCK_FILE)
  const db = new Database(file, { timeout: 0 })
  try {
    // Exclusive locking mode keeps the lock of the first transaction until the connection
    // closes; with the journal in memory, taking it leaves no other file beside this one.
    db.pragma('journal_mode = MEMORY')
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE; COMMIT')
  } catch (err) {
    db.close()
    const code = (err as { code?: unknown }).code
    if (code === 'SQLITE_BUSY') throw new DataDirLockedError(dataDir)
    // Not left by Lectern (or torn as it was first written): say which file, and that it holds nothing.
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      throw new Error(`${file} is not a lock file Lectern can use; it holds no data: remove it while no server runs on ${dataDir}`)
    }
    throw err
  }
  return {
    release () {
      if (db.open) db.close()
    }
  }
}

// One way to drive either change log in tests (the shared suite and the crash test's child):
// open it on a data dir as its store would, write changes as its store would (SQLite: inside a
// transaction; file: begin, durable append, settle), close it. Modules are imported when a log
// of their kind is opened, so the crash test's child starts fast.
import * as fsp from 'node:fs/promises'
import path from 'node:path'
import type { Test } from 'tap'
import type { StoreLogger } from '../../../../lib/store/common.js'
import type { Change, ChangeLog } from '../../../../types/changes.js'

export const LOG_KINDS = ['sqlite', 'file'] as const
export type LogKind = (typeof LOG_KINDS)[number]

export interface LogOptions {
  retentionDays?: number
  clock?: () => Date
  log?: StoreLogger
  /** The file log only: bring it up to date with the file store's entries first, as the store does at every open. */
  reconcile?: boolean
  /** With `reconcile`: the store's locales (the layout the content was written in: lib/store/layout.ts). */
  locales?: readonly string[]
  /** The file log only: keys its tail holds before a rewrite (FileChangeLogOptions). */
  tailKeys?: number
}

export interface LogDriver {
  kind: LogKind
  log: ChangeLog
  /** One write that lands; its seq. */
  write: (change: Change) => Promise<number>
  /** Writes in flight together (one transaction, one group commit); their seqs, in order. */
  writeAll: (changes: readonly Change[]) => Promise<number[]>
  close: () => Promise<void>
}

export async function openLog (kind: LogKind, dataDir: string, options: LogOptions = {}): Promise<LogDriver> {
  const logOptions = { retentionDays: options.retentionDays ?? 30, clock: options.clock, log: options.log }
  if (kind === 'sqlite') {
    const { default: Database } = await import('../../../../lib/sqlite-driver.js')
    const { SqliteChangeLog } = await import('../../../../lib/store/changes/sqlite.js')
    const db = new Database(path.join(dataDir, 'lectern.db'))
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = FULL')
    const log = new SqliteChangeLog(db, logOptions)
    try {
      log.open()
    } catch (err) {
      db.close()
      throw err
    }
    // As the store does: the writes of one event-loop turn share one transaction.
    let queue: Array<{ change: Change, resolve: (seq: number) => void, reject: (err: unknown) => void }> = []
    const flush = (): void => {
      const batch = queue
      queue = []
      try {
        const seqs = db.transaction(() => batch.map(w => log.record(w.change)))()
        batch.forEach((w, i) => { w.resolve(seqs[i] as number) })
      } catch (err) {
        for (const w of batch) w.reject(err)
      }
    }
    const write = async (change: Change): Promise<number> => await new Promise<number>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ change, resolve, reject })
    })
    return {
      kind,
      log,
      write,
      writeAll: async changes => await Promise.all(changes.map(write)),
      close: async () => { log.close(); db.close() }
    }
  }
  if (options.reconcile === true) {
    // The store reconciles its log at open: open one on the data dir, then let go of it.
    const { createStore } = await import('../../../../lib/store/index.js')
    const store = createStore('file', { dataDir, locales: options.locales, syncRetentionDays: logOptions.retentionDays, clock: logOptions.clock, log: logOptions.log })
    await store.open()
    await store.close()
  }
  const { FileChangeLog } = await import('../../../../lib/store/changes/file.js')
  const log = new FileChangeLog({ dir: path.join(dataDir, 'content'), ...logOptions, tailKeys: options.tailKeys })
  await log.open()
  const write = async (change: Change): Promise<number> => {
    const { seq, durable } = log.begin(change)
    await durable
    log.settle(seq)
    return seq
  }
  return { kind, log, write, writeAll: async changes => await Promise.all(changes.map(write)), close: async () => { await log.close() } }
}

/** An upsert of `slug` in the default scope (or the given one), published unless said otherwise, at `at`. */
export function upsert (slug: string, at: string, more: Partial<Change> = {}): Change {
  return { environment: 'default', locale: null, collection: 'posts', slug, op: 'upsert', status: 'published', at, ...more }
}

export function tombstone (slug: string, at: string, more: Partial<Change> = {}): Change {
  return { environment: 'default', locale: null, collection: 'posts', slug, op: 'delete', status: null, at, ...more }
}

/** The file log's module with file writes that fail on demand: after `failWrites(n)`, the next n writes fail with ENOSPC. */
export async function fileLogWithFailingWrites (t: Test): Promise<{ Log: typeof import('../../../../lib/store/changes/file.js').FileChangeLog, failWrites: (n: number) => void }> {
  let failing = 0
  const { FileChangeLog: Log } = await t.mockImport<typeof import('../../../../lib/store/changes/file.js')>('../../../../lib/store/changes/file.js', {
    'node:fs/promises': {
      ...fsp,
      open: async (...args: Parameters<typeof fsp.open>) => {
        const handle = await fsp.open(...args)
        const write = handle.write.bind(handle)
        return Object.assign(handle, {
          write: async (...rest: unknown[]) => {
            if (failing > 0) { failing--; throw Object.assign(new Error('no space left'), { code: 'ENOSPC' }) }
            return await (write as (...a: unknown[]) => Promise<unknown>)(...rest)
          }
        })
      }
    }
  })
  return { Log, failWrites: n => { failing = n } }
}

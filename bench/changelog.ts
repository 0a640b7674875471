// The change logs' write rates (lib/store/changes/): how many records per second each can make
// durable, and what one costs the main thread, at several numbers of writes in flight. Also the
// file store's create rate alone and with a durable log append before each entry write (the I/O
// the file store will do once the log is wired in). Prints a table; writes nothing else.
// Run: npm run build && node dist/bench/changelog.js [--writes N] [--concurrency 1,16,64]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { FileChangeLog } from '../lib/store/changes/file.js'
import { SqliteChangeLog } from '../lib/store/changes/sqlite.js'
import { CONTENT_DIR, FileStore } from '../lib/store/file.js'
import type { Change } from '../types/changes.js'

const { values: opts } = parseArgs({
  options: {
    writes: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '1,16,64' }
  }
})
const WRITES = Number(opts.writes)
const CONCURRENCY = opts.concurrency.split(',').map(Number)
const scratch = mkdtempSync(path.join(os.tmpdir(), 'lectern-changelog-bench-'))
let dirs = 0
const freshDir = (): string => {
  const dir = path.join(scratch, String(++dirs))
  mkdirSync(dir)
  return dir
}

const change = (i: number): Change => ({
  environment: 'default', locale: null, collection: 'posts', slug: `entry-${i}`, op: 'upsert', status: 'published', at: new Date().toISOString()
})

/** Runs `write(i)` for i < WRITES with `concurrency` in flight; writes per second and main-thread CPU µs per write. */
async function measure (concurrency: number, write: (i: number) => Promise<void>): Promise<{ perSec: number, cpuUs: number }> {
  let next = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < WRITES) await write(next++)
  }))
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  // cpuUsage counts every thread of the process: the thread pool's fdatasync waits are not CPU, so this is mostly the main thread.
  return { perSec: Math.round(WRITES / seconds), cpuUs: Math.round((used.user + used.system) / WRITES) }
}

async function fileLog (concurrency: number): Promise<{ perSec: number, cpuUs: number }> {
  const log = new FileChangeLog({ dir: freshDir(), retentionDays: 30 })
  await log.open()
  const result = await measure(concurrency, async i => {
    const { seq, durable } = log.begin(change(i))
    await durable
    log.settle(seq)
  })
  await log.close()
  return result
}

/** As the SQLite store commits: the writes of one event-loop turn in one transaction (synchronous=FULL). */
async function sqliteLog (concurrency: number): Promise<{ perSec: number, cpuUs: number }> {
  const db = new Database(path.join(freshDir(), 'lectern.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  const log = new SqliteChangeLog(db, { retentionDays: 30 })
  log.open()
  let queue: Array<{ change: Change, done: () => void }> = []
  const flush = (): void => {
    const batch = queue
    queue = []
    db.transaction(() => { for (const w of batch) log.record(w.change) })()
    for (const w of batch) w.done()
  }
  const result = await measure(concurrency, async i => await new Promise<void>(resolve => {
    if (queue.length === 0) setImmediate(flush)
    queue.push({ change: change(i), done: resolve })
  }))
  log.close()
  db.close()
  return result
}

/**
 * The file store's creates: alone, after a durable log append ('before', the order the wiring
 * uses), or with the append and the entry write at once ('parallel': safe too, since reconcile at
 * open repairs a record a crash left behind either way; not used, for comparison).
 */
async function fileStore (concurrency: number, withLog: 'no' | 'before' | 'parallel'): Promise<{ perSec: number, cpuUs: number }> {
  const dataDir = freshDir()
  const store = new FileStore({ dataDir })
  await store.open()
  const log = new FileChangeLog({ dir: path.join(dataDir, CONTENT_DIR), retentionDays: 30 })
  await log.open()
  const scope = { environment: 'default', locale: null }
  const result = await measure(concurrency, async i => {
    const input = { slug: `entry-${i}`, status: 'published' as const, data: { title: `Entry ${i}`, views: i } }
    if (withLog === 'no') {
      await store.create(scope, 'posts', input)
      return
    }
    const { seq, durable } = log.begin(change(i))
    if (withLog === 'before') {
      await durable
      await store.create(scope, 'posts', input)
    } else {
      await Promise.all([durable, store.create(scope, 'posts', input)])
    }
    log.settle(seq)
  })
  await log.close()
  await store.close()
  return result
}

/** What `record` itself adds to a write in the SQLite store's transaction (µs, the commit aside). */
function recordCost (): string {
  const db = new Database(path.join(freshDir(), 'lectern.db'))
  const log = new SqliteChangeLog(db, { retentionDays: 30 })
  log.open()
  const started = performance.now()
  db.transaction(() => { for (let i = 0; i < WRITES; i++) log.record(change(i)) })()
  const us = (performance.now() - started) * 1000 / WRITES
  log.close()
  db.close()
  return us.toFixed(1)
}

const table: Array<Record<string, string | number>> = []
for (const concurrency of CONCURRENCY) {
  for (const [name, run] of [
    ['file log: append + fdatasync', fileLog],
    ['sqlite log: record in the turn\'s transaction', sqliteLog],
    ['file store: create', async (c: number) => await fileStore(c, 'no')],
    ['file store: log append, then create', async (c: number) => await fileStore(c, 'before')],
    ['file store: log append and create at once', async (c: number) => await fileStore(c, 'parallel')]
  ] as const) {
    const { perSec, cpuUs } = await run(concurrency)
    table.push({ row: name, 'in flight': concurrency, 'writes/s': perSec, 'CPU µs/write': cpuUs })
  }
}
console.table(table)
console.log(`sqlite log: record() alone costs ${recordCost()} µs inside a transaction`)
console.log(`${WRITES} writes per row, ${os.cpus().length} cores, load average ${os.loadavg().map(l => l.toFixed(1)).join(' ')}`)
rmSync(scratch, { recursive: true, force: true })

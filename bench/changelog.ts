// The change logs' write rates (lib/store/changes/): how many records per second each can make
// durable, and what one costs the main thread, at several numbers of writes in flight. Also each
// store's create rate, its log included (in process, no HTTP: what the store itself costs; the
// create row of `npm run bench` measures through the server). Prints a table; writes nothing else.
// Run: npm run build && node dist/bench/changelog.js [--writes N] [--concurrency 1,16,64]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import Database from '../lib/sqlite-driver.js'
import { FileChangeLog } from '../lib/store/changes/file.js'
import { SqliteChangeLog } from '../lib/store/changes/sqlite.js'
import { createStore } from '../lib/store/index.js'
import type { ContentStore } from '../types/store.js'
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

/** A store's creates, each durable with its change record before it resolves. */
async function storeCreates (kind: ContentStore['kind'], concurrency: number): Promise<{ perSec: number, cpuUs: number }> {
  const store = createStore(kind, { dataDir: freshDir() })
  await store.open()
  const scope = { environment: 'default', locale: null }
  const result = await measure(concurrency, async i => {
    await store.create(scope, 'posts', { slug: `entry-${i}`, status: 'published', data: { title: `Entry ${i}`, views: i } })
  })
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
    ['file store: create (with its log)', async (c: number) => await storeCreates('file', c)],
    ['sqlite store: create (with its log)', async (c: number) => await storeCreates('sqlite', c)]
  ] as const) {
    const { perSec, cpuUs } = await run(concurrency)
    table.push({ row: name, 'in flight': concurrency, 'writes/s': perSec, 'CPU µs/write': cpuUs })
  }
}
console.table(table)
console.log(`sqlite log: record() alone costs ${recordCost()} µs inside a transaction`)
console.log(`${WRITES} writes per row, ${os.cpus().length} cores, load average ${os.loadavg().map(l => l.toFixed(1)).join(' ')}`)
rmSync(scratch, { recursive: true, force: true })

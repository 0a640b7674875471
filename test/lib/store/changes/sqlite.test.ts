// What only the SQLite store's change log does: its tables and their version, back-fill from the
// store's `entries` table, and records that live and die with the write's transaction.
import path from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import Database from '../../../../lib/sqlite-driver.js'
import t, { type Test } from 'tap'
import { SqliteChangeLog } from '../../../../lib/store/changes/sqlite.js'
import { DATABASE_FILE } from '../../../../lib/store/sqlite.js'
import { createStore } from '../../../../lib/store/index.js'
import type { ChangeFilter } from '../../../../types/changes.js'
import { tempDir } from '../../../helper.js'
import { tombstone, upsert } from './drivers.js'

const main: ChangeFilter = { environment: 'default', locale: null }
const AT = '2025-01-01T00:00:00.000Z'

function database (t: Test, dataDir = tempDir(t)): Database.Database {
  const db = new Database(path.join(dataDir, DATABASE_FILE))
  t.teardown(() => { db.close() })
  return db
}

function openLog (db: Database.Database): SqliteChangeLog {
  const log = new SqliteChangeLog(db, { retentionDays: 30 })
  log.open()
  return log
}

t.test('the tables are made once, with their version; another version is refused', async t => {
  const db = database(t)
  const first = openLog(db)
  db.transaction(() => first.record(upsert('a', AT)))()
  first.close()
  const second = openLog(db)
  t.equal(await second.latestSeq(), 1, 'opening again keeps the records')
  t.equal(db.prepare("SELECT value FROM change_log_meta WHERE key = 'version'").pluck().get(), 1)
  t.strictSame(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'change_log%' ORDER BY name").pluck().all(),
    ['change_log', 'change_log_key', 'change_log_meta', 'change_log_scope', 'change_log_tombstones'])
  second.close()
  db.prepare("UPDATE change_log_meta SET value = 2 WHERE key = 'version'").run()
  t.throws(() => openLog(db), /the change log has version 2; this server understands 1/)
})

t.test('a record lives and dies with the savepoint of its write; a seq is never reused', async t => {
  const db = database(t)
  const log = openLog(db)
  const write = db.transaction((slug: string, fail: boolean) => {
    const seq = log.record(upsert(slug, AT))
    if (fail) throw new Error('the entry write failed')
    return seq
  })
  const batch = db.transaction(() => {
    const seqs = [write('a', false)]
    try { write('b', true) } catch {}
    seqs.push(write('c', false))
    return seqs
  })
  t.strictSame(batch(), [1, 3])
  t.strictSame((await log.since(0, 10, main)).records.map(r => `${r.seq}:${r.slug}`), ['1:a', '3:c'])
  t.throws(() => db.transaction(() => { log.record(upsert('d', AT)); throw new Error('commit failed') })())
  t.equal(await log.latestSeq(), 3, 'a rolled-back seq is not readable')
  t.equal(write('e', false), 5)
})

t.test('the latest seq and horizon are kept between writes, but not when read inside a write that rolls back', async t => {
  const db = database(t)
  const log = openLog(db)
  t.equal(await log.latestSeq(), 0)
  db.transaction(() => log.record(upsert('a', AT)))()
  t.equal(await log.latestSeq(), 1, 'a write of this log moves it')
  let seen: Promise<number> | undefined
  t.throws(() => db.transaction(() => {
    log.record(upsert('b', AT))
    // latestSeq reads the counters when called (the promise only carries them).
    seen = log.latestSeq()
    throw new Error('the entry write failed')
  })())
  t.equal(await seen, 2, 'inside the write: its own record')
  t.equal(await log.latestSeq(), 1, 'after the rollback: not the seq read inside it')
  t.equal(await log.horizon(), 0)
  // Compaction moves the horizon: a tombstone older than the retention, dropped.
  db.transaction(() => log.record(tombstone('a', '2000-01-01T00:00:00.000Z')))()
  t.equal(await log.latestSeq(), 3)
  t.same(await log.compact(), { dropped: 1, horizon: 3 })
  t.equal(await log.horizon(), 3, 'compaction moves it')
  t.equal(await log.latestSeq(), 3)
})

t.test('back-fill: the entries of the store get records when the log is made, in one go', async t => {
  const dataDir = tempDir(t)
  const store = createStore('sqlite', { dataDir, environments: ['main', 'staging'], locales: ['en'] })
  await store.open()
  const { entry: a } = await store.create({ environment: 'main', locale: 'en' }, 'posts', { slug: 'a', status: 'draft', data: {} })
  await store.create({ environment: 'staging', locale: null }, 'posts', { slug: 'b', status: 'published', data: {} })
  await store.close()
  const db = database(t, dataDir)
  // A database from before the store kept a log.
  db.exec('DROP TABLE change_log; DROP TABLE change_log_meta')
  const log = openLog(db)
  t.strictSame((await log.since(0, 10, { environment: 'main', locale: 'en' })).records,
    [{ seq: 1, environment: 'main', locale: 'en', collection: 'posts', slug: 'a', op: 'upsert', status: 'draft', at: a.updatedAt }])
  t.strictSame((await log.since(0, 10, { environment: 'staging', locale: null })).records.map(r => r.slug), ['b'])
  log.close()
  db.prepare("DELETE FROM entries WHERE slug = 'a'").run()
  const again = openLog(db)
  t.equal(await again.latestSeq(), 2, 'only a new log is back-filled')
  t.equal(again.reconcile(), 1, 'reconcile finds the entry gone')
  t.strictSame((await again.since(2, 10, { environment: 'main', locale: 'en' })).records.map(r => [r.seq, r.slug, r.op]), [[3, 'a', 'delete']])
  t.equal(again.reconcile(), 0)
})

t.test('a database without entries has nothing to back-fill', async t => {
  const db = database(t)
  const log = openLog(db)
  t.equal(log.reconcile(), 0)
  t.equal(await log.latestSeq(), 0)
})

t.test('the log is refused before open and after close', async t => {
  const db = database(t)
  const log = new SqliteChangeLog(db, { retentionDays: 30 })
  t.throws(() => log.record(upsert('a', AT)), /not open/)
  log.open()
  log.close()
  await t.rejects(log.since(0, 1, main), /not open/)
  await t.rejects(log.horizon(), /not open/)
})

t.test('incremental reads are exact when another connection writes or moves a key (seen from the next turn of the event loop)', async t => {
  const dir = tempDir(t)
  const reader = openLog(database(t, dir))
  const writerDb = database(t, dir)
  const writer = openLog(writerDb)
  const write = (slug: string, at = AT): number => writerDb.transaction(() => writer.record(upsert(slug, at)))()
  const slugs = (records: ReadonlyArray<{ seq: number, slug: string }>): string[] => records.map(r => `${r.seq}:${r.slug}`)
  for (const slug of ['a', 'b', 'c']) write(slug)
  t.strictSame(slugs((await reader.since(0, 10, main)).records), ['1:a', '2:b', '3:c'], 'read, then kept')
  // The other connection moves `a` past them (a new seq) and adds `d`: the kept `1:a` is no longer in the log.
  write('a')
  write('d')
  await nextTurn()
  const page = await reader.since(0, 10, main)
  t.strictSame(slugs(page.records), ['2:b', '3:c', '4:a', '5:d'])
  t.equal(page.upTo, 5)
  t.strictSame(page.records[2], { seq: 4, environment: 'default', locale: null, collection: 'posts', slug: 'a', op: 'upsert', status: 'published', at: AT }, 'every field, the scope the filter\'s')
  t.ok(Object.isFrozen(page.records[0]), 'kept records are frozen like read ones')
  const more = await reader.since(1, 2, main)
  t.strictSame([slugs(more.records), more.more, more.upTo], [['2:b', '3:c'], true, 3], 'paged from a position')
  // Another scope's seqs are not this scope's.
  writerDb.transaction(() => writer.record({ ...upsert('e', AT), environment: 'staging' }))()
  await nextTurn()
  t.strictSame(slugs((await reader.since(5, 10, main)).records), [], 'nothing of another environment')
  t.strictSame(slugs((await reader.since(5, 10, { environment: 'staging', locale: null })).records), ['6:e'])
})

t.test('incremental reads stay exact past the records they keep', async t => {
  const db = database(t)
  const log = openLog(db)
  const count = 10_500
  db.transaction(() => { for (let i = 0; i < count; i++) log.record(upsert(`s${i}`, AT)) })()
  let seen = 0
  for (let after = 0, more = true; more;) {
    const page = await log.since(after, 1000, main)
    t.ok(page.records.every((r, i) => r.seq === after + i + 1), `seqs after ${after} in order, none missing`)
    seen += page.records.length
    after = page.upTo
    more = page.more
  }
  t.equal(seen, count, 'every record once')
  const again = await log.since(0, 1000, main)
  t.strictSame(again.records.map(r => r.slug), Array.from({ length: 1000 }, (_, i) => `s${i}`), 'the oldest, read again after eviction')
})

t.test('compaction by another connection: a reader drops the tombstones it held, and its counters follow', async t => {
  const dir = tempDir(t)
  const reader = openLog(database(t, dir))
  const writerDb = database(t, dir)
  const writer = openLog(writerDb)
  const slugs = (records: ReadonlyArray<{ seq: number, slug: string }>): string[] => records.map(r => `${r.seq}:${r.slug}`)
  // A tombstone past the retention period (AT is long ago), and a recent one.
  writerDb.transaction(() => {
    writer.record(upsert('a', AT))
    writer.record(tombstone('old', AT))
    writer.record(tombstone('new', new Date().toISOString()))
  })()
  await nextTurn()
  t.strictSame(slugs((await reader.since(0, 10, main)).records), ['1:a', '2:old', '3:new'], 'held in memory')
  t.same(await writer.compact(), { dropped: 1, horizon: 2 })
  await nextTurn()
  t.strictSame(slugs((await reader.since(0, 10, main)).records), ['1:a', '3:new'], 'the dropped tombstone is gone')
  t.equal(await reader.horizon(), 2)
  t.equal(await reader.latestSeq(), 3)
})

t.test('a reader far behind another connection loads the newest records anew', async t => {
  const dir = tempDir(t)
  const reader = openLog(database(t, dir))
  const writerDb = database(t, dir)
  const writer = openLog(writerDb)
  t.strictSame((await reader.since(0, 10, main)).records, [])
  const count = 10_050
  writerDb.transaction(() => { for (let i = 0; i < count; i++) writer.record(upsert(`s${i}`, AT)) })()
  await nextTurn()
  const tail = await reader.since(count - 3, 10, main)
  t.strictSame([tail.records.map(r => r.slug), tail.more, tail.upTo], [[`s${count - 3}`, `s${count - 2}`, `s${count - 1}`], false, count])
  const head = await reader.since(0, 2, main)
  t.strictSame([head.records.map(r => r.slug), head.more], [['s0', 's1'], true], 'older positions from the table')
})

// One list of cases, both change logs (types/changes.ts): what the sync endpoint will rely on.
import { rm } from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CHANGE_LOG_FILE } from '../../../../lib/store/changes/format.js'
import { createStore } from '../../../../lib/store/index.js'
import { DATABASE_FILE } from '../../../../lib/store/sqlite.js'
import type { Change, ChangeFilter, ChangeLog, ChangeRecord } from '../../../../types/changes.js'
import { tempDir } from '../../../helper.js'
import { LOG_KINDS, openLog, tombstone, upsert, type LogDriver, type LogKind, type LogOptions } from './drivers.js'

const DAY = 86_400_000
const T0 = Date.parse('2025-01-01T00:00:00.000Z')
const main: ChangeFilter = { environment: 'default', locale: null }

/** A clock the test moves; every reading is a new Date. */
function manualClock (start = T0): { now: () => Date, set: (ms: number) => void, ms: () => number } {
  let ms = start
  return { now: () => new Date(ms), set: value => { ms = value }, ms: () => ms }
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** Makes a store's data as it was before stores kept a log: the log's table or file is gone. */
async function forgetLog (kind: LogKind, dataDir: string): Promise<void> {
  if (kind === 'file') {
    await rm(path.join(dataDir, 'content', CHANGE_LOG_FILE))
    return
  }
  const { default: Database } = await import('../../../../lib/sqlite-driver.js')
  const db = new Database(path.join(dataDir, DATABASE_FILE))
  db.exec('DROP TABLE change_log; DROP TABLE change_log_meta')
  db.close()
}

async function open (t: Test, kind: LogKind, dataDir: string, options: LogOptions = {}): Promise<LogDriver> {
  const driver = await openLog(kind, dataDir, options)
  let closed = false
  const close = driver.close
  driver.close = async () => { if (!closed) { closed = true; await close() } }
  t.teardown(driver.close)
  return driver
}

/** Every record of a scope, paging `limit` at a time. */
async function readAll (log: ChangeLog, filter: ChangeFilter = main, limit = 1000, after = 0): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = []
  for (;;) {
    const page = await log.since(after, limit, filter)
    out.push(...page.records)
    after = page.upTo
    if (!page.more) return out
  }
}

const brief = (records: readonly ChangeRecord[]): string[] => records.map(r => `${r.seq}:${r.slug}:${r.op}${r.status === null ? '' : ':' + r.status}`)

for (const kind of LOG_KINDS) {
  t.test(`log=${kind}`, async t => {
    t.test('an empty log', async t => {
      const { log } = await open(t, kind, tempDir(t))
      t.equal(await log.latestSeq(), 0)
      t.equal(await log.horizon(), 0)
      t.strictSame(await log.since(0, 10, main), { records: [], more: false, upTo: 0 })
    })

    t.test('each change gets a growing seq; a key keeps its latest change only', async t => {
      const { log, write, writeAll } = await open(t, kind, tempDir(t))
      const at = iso(T0)
      t.equal(await write(upsert('a', at)), 1)
      t.equal(await write(upsert('b', at, { status: 'draft' })), 2)
      t.strictSame(await writeAll([upsert('c', at), upsert('a', at, { status: 'draft' })]), [3, 4])
      t.equal(await write(tombstone('b', at)), 5)
      t.equal(await log.latestSeq(), 5)
      const page = await log.since(0, 10, main)
      t.strictSame(brief(page.records), ['3:c:upsert:published', '4:a:upsert:draft', '5:b:delete'])
      t.strictSame(page.records[1], { seq: 4, environment: 'default', locale: null, collection: 'posts', slug: 'a', op: 'upsert', status: 'draft', at })
      t.ok(Object.isFrozen(page.records[0]), 'records are frozen')
      t.equal(page.upTo, 5)
      t.strictSame(brief((await log.since(3, 10, main)).records), ['4:a:upsert:draft', '5:b:delete'], 'after a position')
      t.strictSame(await log.since(5, 10, main), { records: [], more: false, upTo: 5 }, 'nothing new')
    })

    t.test('pages: more, and upTo to go on from', async t => {
      const { log, writeAll } = await open(t, kind, tempDir(t))
      await writeAll(Array.from({ length: 7 }, (_, i) => upsert(`e${i}`, iso(T0))))
      const first = await log.since(0, 3, main)
      t.strictSame(first.records.map(r => r.seq), [1, 2, 3])
      t.equal(first.more, true)
      t.equal(first.upTo, 3)
      const second = await log.since(first.upTo, 4, main)
      t.strictSame(second.records.map(r => r.seq), [4, 5, 6, 7])
      t.equal(second.more, false, 'a page exactly as long as what is left is the last one')
      t.equal(second.upTo, 7)
      t.strictSame((await readAll(log, main, 2)).map(r => r.seq), [1, 2, 3, 4, 5, 6, 7])
    })

    t.test('a read is within one environment and locale, and the collections asked for', async t => {
      const { log, writeAll } = await open(t, kind, tempDir(t))
      const at = iso(T0)
      await writeAll([
        upsert('a', at),
        upsert('b', at, { locale: 'en' }),
        upsert('c', at, { environment: 'staging' }),
        upsert('d', at, { collection: 'pages' }),
        upsert('e', at, { locale: 'de', collection: 'pages' }),
        upsert('f', at, { collection: 'authors' })
      ])
      t.strictSame((await readAll(log)).map(r => r.slug), ['a', 'd', 'f'])
      t.strictSame((await readAll(log, { environment: 'default', locale: 'en' })).map(r => r.slug), ['b'])
      t.strictSame((await readAll(log, { environment: 'staging', locale: null })).map(r => r.slug), ['c'])
      t.strictSame((await readAll(log, { ...main, collections: ['pages', 'authors'] })).map(r => r.slug), ['d', 'f'])
      t.strictSame((await readAll(log, { ...main, collections: [] })).map(r => r.slug), [])
      t.strictSame((await readAll(log, { environment: 'nowhere', locale: null })), [])
      const paged = await log.since(0, 1, { ...main, collections: ['authors'] })
      t.strictSame([paged.records.map(r => r.slug), paged.more, paged.upTo], [['f'], false, 6], 'filtered out records do not make a page full')
    })

    t.test('an initial run leaves out what a client starting from nothing cannot hold, up to its start', async t => {
      const { log, write, writeAll } = await open(t, kind, tempDir(t))
      const at = iso(T0)
      await writeAll([upsert('a', at), upsert('b', at, { status: 'draft' }), upsert('c', at), tombstone('d', at)])
      const start = await log.latestSeq()
      await writeAll([tombstone('a', at), upsert('e', at, { status: 'draft' })])
      const all = { seq: start, publishedOnly: false }
      const published = { seq: start, publishedOnly: true }
      t.strictSame(brief(await readAll(log, { ...main, baseline: all })), ['2:b:upsert:draft', '3:c:upsert:published', '5:a:delete', '6:e:upsert:draft'])
      t.strictSame(brief(await readAll(log, { ...main, baseline: published })), ['3:c:upsert:published', '5:a:delete', '6:e:upsert:draft'],
        'drafts and tombstones after the start are given: the client may hold the entry')
      await write(upsert('b', at))
      t.strictSame(brief(await readAll(log, { ...main, baseline: published })), ['3:c:upsert:published', '5:a:delete', '6:e:upsert:draft', '7:b:upsert:published'])
      const page = await log.since(0, 1, { ...main, baseline: published })
      t.strictSame([page.records.map(r => r.seq), page.more, page.upTo], [[3], true, 3], 'left-out records are skipped before the limit counts')
    })

    t.test('a run with writes racing it skips nothing', async t => {
      const { log, write } = await open(t, kind, tempDir(t))
      let random = 7
      const next = (n: number): number => { random = (random * 1103515245 + 12345) % 2147483648; return (random >>> 16) % n }
      // The latest seq of each entry whose write has resolved, and the writes in flight.
      const latest = new Map<string, number>()
      const inFlight: Array<Promise<void>> = []
      const change = (): void => {
        const slug = `s${next(12)}`
        const c = next(4) === 0 ? tombstone(slug, iso(T0)) : upsert(slug, iso(T0), { status: next(2) === 0 ? 'draft' : 'published' })
        inFlight.push(write(c).then(seq => { latest.set(slug, Math.max(seq, latest.get(slug) ?? 0)) }))
      }
      for (let i = 0; i < 20; i++) change()
      // A client that applies every record it is given, run after run.
      const client = new Map<string, number>()
      let position = 0
      for (let run = 0; run < 6; run++) {
        for (;;) {
          const page = await log.since(position, 3, main)
          for (const r of page.records) client.set(r.slug, r.seq)
          position = page.upTo
          for (let i = next(4); i > 0; i--) change()
          if (!page.more) break
        }
        await Promise.all(inFlight)
        // Every entry whose latest change is at or below the run's end holds that change.
        for (const [slug, seq] of latest) if (seq <= position) t.equal(client.get(slug), seq, `run ${run}: ${slug}`)
      }
      t.ok(position > 20, 'the runs read past the first writes')
    })

    t.test('the log survives a restart; seqs go on above every earlier one', async t => {
      const dir = tempDir(t)
      const first = await open(t, kind, dir)
      const at = iso(T0)
      await first.writeAll([upsert('a', at), upsert('b', at, { locale: 'en' }), tombstone('c', at)])
      await first.write(upsert('c', at))
      await first.close()
      const second = await open(t, kind, dir)
      t.equal(await second.log.latestSeq(), 4)
      t.strictSame(brief(await readAll(second.log)), ['1:a:upsert:published', '4:c:upsert:published'])
      t.strictSame(brief(await readAll(second.log, { environment: 'default', locale: 'en' })), ['2:b:upsert:published'])
      t.equal(await second.write(upsert('a', at)), 5)
      await second.close()
      const third = await open(t, kind, dir)
      t.strictSame(brief(await readAll(third.log)), ['4:c:upsert:published', '5:a:upsert:published'], 'a replaced record stays replaced')
    })

    t.test('retention: tombstones older than the period are dropped and the horizon moves to them', async t => {
      const dir = tempDir(t)
      const clock = manualClock()
      const first = await open(t, kind, dir, { retentionDays: 2, clock: clock.now })
      await first.writeAll([tombstone('old', iso(T0)), upsert('kept', iso(T0)), tombstone('young', iso(T0 + DAY)), upsert('x', iso(T0))])
      await first.write(tombstone('x', iso(T0 + 1000)))
      clock.set(T0 + 2 * DAY)
      t.strictSame(await first.log.compact(), { dropped: 0, horizon: 0 }, 'exactly the period old: kept')
      clock.set(T0 + 2 * DAY + 1001)
      t.strictSame(await first.log.compact(), { dropped: 2, horizon: 5 })
      t.equal(await first.log.horizon(), 5)
      t.strictSame(brief(await readAll(first.log)), ['2:kept:upsert:published', '3:young:delete'], 'upserts are never dropped')
      t.equal(await first.log.latestSeq(), 5, 'the latest seq counts dropped records')
      t.strictSame(await first.log.compact(), { dropped: 0, horizon: 5 }, 'nothing more to drop')
      await first.close()

      clock.set(T0 + 10 * DAY)
      const second = await open(t, kind, dir, { retentionDays: 2, clock: clock.now })
      t.equal(await second.log.horizon(), 5, 'the horizon survives a restart')
      t.strictSame(brief(await readAll(second.log)), ['2:kept:upsert:published'], 'open drops what expired meanwhile')
      t.equal(await second.write(upsert('new', iso(clock.ms()))), 6, 'no seq is reused, even when its record is gone')
    })

    t.test('a horizon at the latest seq: an empty log still counts on', async t => {
      const dir = tempDir(t)
      const clock = manualClock()
      const first = await open(t, kind, dir, { retentionDays: 1, clock: clock.now })
      await first.writeAll([tombstone('a', iso(T0)), tombstone('b', iso(T0))])
      clock.set(T0 + 3 * DAY)
      t.strictSame(await first.log.compact(), { dropped: 2, horizon: 2 })
      await first.close()
      const second = await open(t, kind, dir, { retentionDays: 1, clock: clock.now })
      t.strictSame([await second.log.latestSeq(), await second.log.horizon()], [2, 2])
      t.strictSame(await second.log.since(0, 10, main), { records: [], more: false, upTo: 2 })
      t.equal(await second.write(upsert('c', iso(clock.ms()))), 3)
    })

    t.test('compaction runs on its own, at most hourly, checked on write', async t => {
      const clock = manualClock()
      const { log, write } = await open(t, kind, tempDir(t), { retentionDays: 1, clock: clock.now })
      await write(tombstone('a', iso(T0)))
      clock.set(T0 + 2 * DAY)
      await write(upsert('b', iso(clock.ms())))
      while (await log.horizon() === 0) await new Promise(resolve => setImmediate(resolve))
      t.equal(await log.horizon(), 1)
      t.strictSame(brief(await readAll(log)), ['2:b:upsert:published'])
    })

    t.test('back-fill: every entry stored before the log existed gets a record, once', async t => {
      const dataDir = tempDir(t)
      const store = createStore(kind, { dataDir, locales: ['en'] })
      await store.open()
      const scope = { environment: 'default', locale: 'en' }
      const { entry: a } = await store.create(scope, 'posts', { slug: 'a', status: 'published', data: {} })
      const { entry: b } = await store.create(scope, 'posts', { slug: 'b', status: 'draft', data: {} })
      const { entry: c } = await store.create({ environment: 'default', locale: null }, 'pages', { slug: 'c', status: 'published', data: {} })
      await store.close()
      await forgetLog(kind, dataDir)
      const first = await open(t, kind, dataDir, { reconcile: true, locales: ['en'] })
      const en = await readAll(first.log, { environment: 'default', locale: 'en' })
      t.strictSame(en.map(r => [r.slug, r.op, r.status, r.at]).sort(), [['a', 'upsert', 'published', a.updatedAt], ['b', 'upsert', 'draft', b.updatedAt]])
      t.strictSame((await readAll(first.log)).map(r => [r.collection, r.slug, r.at]), [['pages', 'c', c.updatedAt]])
      t.equal(await first.log.latestSeq(), 3)
      await first.close()
      const second = await open(t, kind, dataDir, { reconcile: true, locales: ['en'] })
      t.equal(await second.log.latestSeq(), 3, 'a second open adds nothing')
      t.equal(await second.write(upsert('d', iso(T0))), 4)
    })

    t.test('a change that is not well formed is refused', async t => {
      const { log, write } = await open(t, kind, tempDir(t))
      const at = iso(T0)
      const bad: Array<[string, Change]> = [
        ['a slug with a path', upsert('../x', at)],
        ['a bad collection', upsert('a', at, { collection: 'Posts!' })],
        ['a bad locale', upsert('a', at, { locale: '' })],
        ['a delete with a status', tombstone('a', at, { status: 'draft' })],
        ['an upsert without one', upsert('a', at, { status: null })],
        ['another time form', upsert('a', '2025-01-01T00:00:00Z')]
      ]
      for (const [what, change] of bad) await t.rejects(write(change), TypeError, what)
      t.equal(await log.latestSeq(), 0)
      await t.rejects(log.since(-1, 10, main), RangeError)
      await t.rejects(log.since(0, 0, main), RangeError)
      await t.rejects(log.since(0.5, 10, main), RangeError)
    })

    t.test('a closed log cannot be read', async t => {
      const driver = await open(t, kind, tempDir(t))
      await driver.close()
      await t.rejects(driver.log.since(0, 1, main), /not open/)
      await t.rejects(driver.log.latestSeq(), /not open/)
    })
  })
}

t.test('both logs give the same answers to the same writes', async t => {
  const answers: string[][] = []
  for (const kind of LOG_KINDS) {
    const { log, writeAll, write } = await open(t, kind, path.join(tempDir(t)))
    const at = iso(T0)
    await writeAll([upsert('a', at), upsert('b', at, { locale: 'en' }), tombstone('c', at, { collection: 'pages' })])
    await write(upsert('a', at, { status: 'draft' }))
    answers.push(brief(await readAll(log, { ...main, baseline: { seq: 3, publishedOnly: true } })), brief(await readAll(log, main, 1)))
  }
  t.strictSame(answers.slice(0, 2), answers.slice(2, 4))
})

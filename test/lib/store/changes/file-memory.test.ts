// The file store's change log keeps in memory what the entries need, not the history (issue 28):
// tombstones are read from the file, and what a read says is what a log holding every record in
// memory would say, across rewrites, failed writes and reopening.
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { FileChangeLog, type FileChangeLogOptions } from '../../../../lib/store/changes/file.js'
import { CHANGE_LOG_FILE, parseChangeLog } from '../../../../lib/store/changes/format.js'
import type { Change, ChangeFilter, ChangeRecord } from '../../../../types/changes.js'
import { tempDir } from '../../../helper.js'
import { fileLogWithFailingWrites, tombstone, upsert } from './drivers.js'

const main: ChangeFilter = { environment: 'default', locale: null }
const AT = '2025-01-01T00:00:00.000Z'
/** Within the retention period of AT's tombstones. */
const clock = (): Date => new Date('2025-01-02T00:00:00.000Z')

async function openLog (t: Test, dataDir: string, options: Partial<FileChangeLogOptions> = {}): Promise<FileChangeLog> {
  const log = new FileChangeLog({ dir: path.join(dataDir, 'content'), retentionDays: 30, clock, ...options })
  await log.open()
  t.teardown(() => log.close())
  return log
}

async function write (log: FileChangeLog, change: Change): Promise<number> {
  const { seq, durable } = log.begin(change)
  await durable
  log.settle(seq)
  return seq
}

/** Every record of a read, page by page. */
async function readAll (log: FileChangeLog, filter: ChangeFilter, pageSize: number, afterSeq = 0): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = []
  let position = afterSeq
  for (;;) {
    const page = await log.since(position, pageSize, filter)
    out.push(...page.records)
    position = page.upTo
    if (!page.more) return out
  }
}

const brief = (records: readonly ChangeRecord[]): string[] => records.map(r => `${r.seq}:${r.collection}/${r.slug}:${r.op}`)

t.test('create and delete churn: memory holds the entries only, the file every tombstone', async t => {
  const dataDir = tempDir(t)
  const log = await openLog(t, dataDir, { tailKeys: 64 })
  for (const slug of ['a', 'b', 'c']) await write(log, upsert(slug, AT))
  const rounds = 3000
  for (let i = 0; i < rounds; i += 50) {
    await Promise.all(Array.from({ length: 50 }, async (_, j) => {
      await write(log, upsert(`k${i + j}`, AT))
      await write(log, tombstone(`k${i + j}`, AT))
    }))
  }
  const footprint = log.footprint
  t.equal(footprint.records, 3, 'one record in memory per entry, none per deleted key')
  t.ok(footprint.tailKeys <= 3 * 64, `${footprint.tailKeys} keys in the tail: bounded by tailKeys, not by ${rounds} rounds`)
  const all = (await log.since(0, 10 * rounds, main)).records
  t.equal(all.length, 3 + rounds, 'every delete is reported')
  t.equal(all.filter(r => r.op === 'delete').length, rounds)
  t.equal(new Set(all.map(r => r.slug)).size, all.length, 'each key once')
  t.ok(all.every((r, i) => i === 0 || r.seq > (all[i - 1] as ChangeRecord).seq), 'in seq order')
  t.strictSame(brief(await readAll(log, main, 97)), brief(all), 'paged reads give the same records')
  t.strictSame(brief(await readAll(log, main, 5, all[1000]?.seq)), brief(all.slice(1001)), 'from a position in the middle')
  const lines = parseChangeLog(readFileSync(path.join(dataDir, 'content', CHANGE_LOG_FILE))).records.length
  t.ok(lines <= 2 * (3 + rounds) + 1000, `${lines} lines in the file for ${3 + rounds} live records`)
  await log.close()
  const again = await openLog(t, dataDir, { tailKeys: 64 })
  t.equal(again.footprint.records, 3, 'the same after reopening')
  t.strictSame(brief((await again.since(0, 10 * rounds, main)).records), brief(all))
})

t.test('reads match a log holding every record in memory, across rewrites, scopes and filters', async t => {
  const dataDir = tempDir(t)
  let log = await openLog(t, dataDir, { tailKeys: 4 })
  const model = new Map<string, ChangeRecord>()
  const scopes = [main, { environment: 'default', locale: 'fr' }]
  let state = 7
  const random = (n: number): number => { state = (state * 1103515245 + 12345) % 2147483648; return state % n }
  for (let round = 0; round < 40; round++) {
    const changes = Array.from({ length: 25 }, () => {
      const more = { locale: scopes[random(2)]?.locale ?? null, collection: random(3) === 0 ? 'pages' : 'posts' }
      const slug = `s${random(12)}`
      return random(2) === 0 ? upsert(slug, AT, more) : tombstone(slug, AT, more)
    })
    // One write per key at a time, as a store chains them; keys in parallel.
    for (const change of changes) {
      const seq = await write(log, change)
      model.set(`${change.locale ?? ''}/${change.collection}/${change.slug}`, { ...change, seq })
    }
    if (round % 10 === 9) {
      await log.close()
      log = await openLog(t, dataDir, { tailKeys: 4 })
    }
    const latest = Math.max(...[...model.values()].map(r => r.seq))
    for (const scope of scopes) {
      const expected = [...model.values()].filter(r => r.locale === scope.locale).sort((a, b) => a.seq - b.seq)
      t.strictSame(brief(await readAll(log, scope, 1 + random(9))), brief(expected), `round ${round}, locale ${String(scope.locale)}`)
      const posts = await readAll(log, { ...scope, collections: ['posts'] }, 4)
      t.strictSame(brief(posts), brief(expected.filter(r => r.collection === 'posts')), 'one collection')
      const baseline = Math.floor(latest / 2)
      const initial = await readAll(log, { ...scope, baseline: { seq: baseline, publishedOnly: false } }, 3)
      t.strictSame(brief(initial), brief(expected.filter(r => r.seq > baseline || r.op === 'upsert')), 'an initial run leaves out tombstones below its start')
    }
  }
  t.ok(log.footprint.tailKeys <= 40, 'the tail stays small')
})

t.test('a failed write settled as the entry really is keeps its record through a rewrite and a reopen', async t => {
  const dataDir = tempDir(t)
  let now = Date.parse('2025-02-01T00:00:00.000Z')
  const log = await openLog(t, dataDir, { clock: () => new Date(now) })
  await write(log, upsert('kept', AT))
  const create = log.begin(upsert('lost', AT))
  await create.durable
  now += 1000
  log.settle(create.seq, null)
  const gone = log.begin(tombstone('kept', AT))
  await gone.durable
  log.settle(gone.seq, { status: 'published', updatedAt: AT })
  const expected = ['3:posts/kept:upsert', '2:posts/lost:delete'].sort()
  t.strictSame(brief((await log.since(0, 10, main)).records).sort(), expected, 'read from memory and the file')
  t.equal(log.footprint.corrections, 2, 'held in place of their lines')
  await write(log, upsert('other', AT))
  await log.compact()
  t.equal(log.footprint.corrections, 0, 'a rewrite writes them in the file')
  t.strictSame(brief((await log.since(0, 10, main)).records), ['2:posts/lost:delete', '3:posts/kept:upsert', '4:posts/other:upsert'])
  await log.close()
  const again = await openLog(t, dataDir)
  t.strictSame(brief((await again.since(0, 10, main)).records), ['2:posts/lost:delete', '3:posts/kept:upsert', '4:posts/other:upsert'])
})

t.test('a rewrite that fails leaves the log as it was, and the next one drops what it could not', async t => {
  const { Log, failWrites } = await fileLogWithFailingWrites(t)
  const dataDir = tempDir(t)
  const log = new Log({ dir: path.join(dataDir, 'content'), retentionDays: 30, clock })
  await log.open()
  t.teardown(() => log.close())
  for (const change of [upsert('a', AT), tombstone('b', AT), upsert('a', AT), upsert('b', AT), tombstone('b', AT)]) await write(log, change)
  const expected = ['3:posts/a:upsert', '5:posts/b:delete']
  failWrites(1)
  await t.rejects(log.compact(), /no space left/)
  t.strictSame(readdirSync(path.join(dataDir, 'content')), [CHANGE_LOG_FILE], 'no temp file left')
  t.strictSame(brief((await log.since(0, 10, main)).records), expected, 'superseded lines are still known as such')
  t.equal(log.footprint.tailKeys, 2)
  t.equal(await write(log, upsert('c', AT)), 6, 'appends go on')
  t.strictSame(await log.compact(), { dropped: 0, horizon: 0 })
  t.equal(parseChangeLog(readFileSync(path.join(dataDir, 'content', CHANGE_LOG_FILE))).records.length, 3, 'the superseded lines are gone')
  t.strictSame(brief((await log.since(0, 10, main)).records), [...expected, '6:posts/c:upsert'])
})

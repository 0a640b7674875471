// What only the file store's change log does: readability in seq order across parallel entry
// writes, settling a failed write, a torn or damaged file, group commit, rewrites, reconcile.
import { appendFileSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import path from 'node:path'
import t, { type Test } from 'tap'
import { FileChangeLog, type FileChangeLogOptions } from '../../../../lib/store/changes/file.js'
import { CHANGE_LOG_FILE, parseChangeLog } from '../../../../lib/store/changes/format.js'
import { createStore, type StoreLogger } from '../../../../lib/store/index.js'
import type { ChangeFilter } from '../../../../types/changes.js'
import { tempDir } from '../../../helper.js'
import { fileLogWithFailingWrites, tombstone, upsert } from './drivers.js'

const main: ChangeFilter = { environment: 'default', locale: null }
const AT = '2025-01-01T00:00:00.000Z'

interface Logged { level: string, msg: string }

function recorder (): { log: StoreLogger, lines: Logged[] } {
  const lines: Logged[] = []
  const at = (level: string) => (_obj: object, msg: string) => { lines.push({ level, msg }) }
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

async function openLog (t: Test, dataDir: string, options: Partial<FileChangeLogOptions> = {}, Log = FileChangeLog): Promise<FileChangeLog> {
  const log = new Log({ dir: path.join(dataDir, 'content'), retentionDays: 30, ...options })
  await log.open()
  t.teardown(() => log.close())
  return log
}

async function write (log: FileChangeLog, change = upsert('a', AT)): Promise<number> {
  const { seq, durable } = log.begin(change)
  await durable
  log.settle(seq)
  return seq
}

const fileOf = (dataDir: string): string => path.join(dataDir, 'content', CHANGE_LOG_FILE)
const slugs = async (log: FileChangeLog): Promise<string[]> => (await log.since(0, 1000, main)).records.map(r => `${r.seq}:${r.slug}`)

t.test('a change is readable once it is settled and every lower seq is too', async t => {
  const log = await openLog(t, tempDir(t))
  const a = log.begin(upsert('a', AT))
  const b = log.begin(upsert('b', AT))
  await Promise.all([a.durable, b.durable])
  log.settle(b.seq)
  t.strictSame(await slugs(log), [], 'b waits for a')
  t.equal(await log.latestSeq(), 0)
  log.settle(a.seq)
  t.strictSame(await slugs(log), ['1:a', '2:b'])
  t.equal(await log.latestSeq(), 2)

  const c = log.begin(upsert('c', AT))
  log.settle(c.seq)
  t.strictSame(await slugs(log), ['1:a', '2:b'], 'settled before its append is on disk: not yet')
  t.throws(() => { log.settle(c.seq) }, /settled already/)
  await c.durable
  t.strictSame(await slugs(log), ['1:a', '2:b', '3:c'])
  log.settle(c.seq) // readable already: nothing to do
  t.strictSame(await slugs(log), ['1:a', '2:b', '3:c'])
  t.throws(() => { log.settle(99) }, /no change 99/)
})

t.test('a write that failed is settled as the entry really is', async t => {
  let now = Date.parse('2025-02-01T00:00:00.000Z')
  const log = await openLog(t, tempDir(t), { clock: () => new Date(now) })
  await write(log, upsert('a', AT))
  const update = log.begin(upsert('a', '2025-01-02T00:00:00.000Z', { status: 'draft' }))
  await update.durable
  log.settle(update.seq, { status: 'published', updatedAt: AT })
  const create = log.begin(upsert('b', AT))
  await create.durable
  now += 1000
  log.settle(create.seq, null)
  const records = (await log.since(0, 10, main)).records
  t.strictSame(records.map(r => [r.seq, r.slug, r.op, r.status, r.at]), [
    [2, 'a', 'upsert', 'published', AT],
    [3, 'b', 'delete', null, '2025-02-01T00:00:01.000Z']
  ])
})

t.test('an append that fails is never readable and holds nothing up', async t => {
  const { Log, failWrites } = await fileLogWithFailingWrites(t)
  const dataDir = tempDir(t)
  const log = await openLog(t, dataDir, {}, Log)
  await write(log, upsert('a', AT))
  failWrites(1)
  const lost = log.begin(upsert('b', AT))
  await t.rejects(lost.durable, /no space left/)
  log.settle(lost.seq) // what a store does in its finally: harmless after a failed append
  t.equal(await write(log, upsert('c', AT)), 3)
  t.strictSame(await slugs(log), ['1:a', '3:c'])
  await log.close()
  t.strictSame(parseChangeLog(readFileSync(fileOf(dataDir))).records.map(r => r.seq), [1, 3], 'no trace of it in the file')
})

t.test('a torn last line is cut off at open; appends go on after the whole lines', async t => {
  const dataDir = tempDir(t)
  const first = await openLog(t, dataDir)
  for (const slug of ['a', 'b', 'c']) await write(first, upsert(slug, AT))
  await first.close()
  const whole = statSync(fileOf(dataDir)).size
  appendFileSync(fileOf(dataDir), '[4,"default",null,"posts","d","ups')
  const { log, lines } = recorder()
  const second = await openLog(t, dataDir, { log })
  t.strictSame(await slugs(second), ['1:a', '2:b', '3:c'])
  t.equal(statSync(fileOf(dataDir)).size, whole, 'cut back to the last whole line')
  t.match(lines, [{ level: 'warn', msg: /left incomplete by a crash/ }])
  t.equal(await second.horizon(), 0, 'nothing readers saw was lost')
  t.equal(await write(second, upsert('d', AT)), 4)
  await second.close()
  const third = await openLog(t, dataDir)
  t.strictSame(await slugs(third), ['1:a', '2:b', '3:c', '4:d'])
})

t.test('damage in the middle expires every cursor so far and is rewritten away', async t => {
  const dataDir = tempDir(t)
  const first = await openLog(t, dataDir)
  for (const slug of ['a', 'b', 'c']) await write(first, upsert(slug, AT))
  await first.close()
  const text = readFileSync(fileOf(dataDir), 'utf8').split('\n')
  text[2] = '\u0000'.repeat(text[2]?.length ?? 0)
  writeFileSync(fileOf(dataDir), text.join('\n'))
  const { log, lines } = recorder()
  const second = await openLog(t, dataDir, { log })
  t.strictSame(await slugs(second), ['1:a', '3:c'])
  t.equal(await second.horizon(), 3)
  t.match(lines, [{ level: 'error', msg: /damaged records; every sync cursor so far is expired/ }])
  t.equal(parseChangeLog(readFileSync(fileOf(dataDir))).damage, 'none', 'the file is whole again')
  t.equal(await write(second, upsert('d', AT)), 4)
})

t.test('a file that is not a change log, or of another version, is refused', async t => {
  const dataDir = tempDir(t)
  await fsp.mkdir(path.join(dataDir, 'content'))
  writeFileSync(fileOf(dataDir), 'hello\n')
  await t.rejects(new FileChangeLog({ dir: path.join(dataDir, 'content'), retentionDays: 30 }).open(), /does not start with a Lectern change log header/)
  writeFileSync(fileOf(dataDir), '{"log":"lectern-changes","version":2,"horizon":0}\n')
  await t.rejects(new FileChangeLog({ dir: path.join(dataDir, 'content'), retentionDays: 30 }).open(), /has format version 2; this server understands 1/)
  writeFileSync(fileOf(dataDir), '')
  const log = await openLog(t, dataDir)
  t.equal(await log.latestSeq(), 0, 'an empty file is a new log')
})

t.test('a rewrite a crash left unfinished is removed at open', async t => {
  const dataDir = tempDir(t)
  await (await openLog(t, dataDir)).close()
  const leftover = path.join(dataDir, 'content', `.${CHANGE_LOG_FILE}.0b7c.tmp`)
  writeFileSync(leftover, 'partial')
  await openLog(t, dataDir)
  t.strictSame(readdirSync(path.join(dataDir, 'content')), [CHANGE_LOG_FILE])
})

t.test('superseded lines are rewritten away once they outnumber the live records', async t => {
  const dataDir = tempDir(t)
  const log = await openLog(t, dataDir)
  for (let i = 0; i < 2500; i += 100) {
    await Promise.all(Array.from({ length: 100 }, async (_, j) => await write(log, upsert(`e${(i + j) % 3}`, AT))))
  }
  await log.close()
  const parsed = parseChangeLog(readFileSync(fileOf(dataDir)))
  t.ok(parsed.records.length <= 1100, `${parsed.records.length} lines for 3 entries after 2500 writes`)
  const again = await openLog(t, dataDir)
  t.strictSame(await slugs(again), ['2498:e1', '2499:e2', '2500:e0'])
})

t.test('a rewrite keeps records appended but not yet readable', async t => {
  const dataDir = tempDir(t)
  let now = Date.parse(AT)
  const log = await openLog(t, dataDir, { retentionDays: 1, clock: () => new Date(now) })
  await write(log, tombstone('gone', AT))
  const waiting = log.begin(upsert('waiting', AT))
  await waiting.durable
  now += 2 * 86_400_000
  t.strictSame(await log.compact(), { dropped: 1, horizon: 1 })
  log.settle(waiting.seq)
  t.strictSame(await slugs(log), ['2:waiting'])
  await write(log, upsert('after', AT))
  await log.close()
  const again = await openLog(t, dataDir, { retentionDays: 1, clock: () => new Date(now) })
  t.strictSame(await slugs(again), ['2:waiting', '3:after'])
  t.equal(await again.horizon(), 1)
})

t.test('reconcile replaces records a crash left wrong, and records entries made or removed behind the log', async t => {
  const dataDir = tempDir(t)
  const scope = { environment: 'default', locale: null }
  const entries = [
    { scope, collection: 'posts', entry: { slug: 'kept', status: 'published' as const, data: {}, createdAt: AT, updatedAt: '2025-01-02T00:00:00.000Z' } },
    { scope, collection: 'posts', entry: { slug: 'changed', status: 'published' as const, data: {}, createdAt: AT, updatedAt: '2025-01-03T00:00:00.000Z' } }
  ]
  const log = await openLog(t, dataDir)
  t.equal(await log.reconcile([...entries, { scope, collection: 'posts', entry: { ...entries[0]!.entry, slug: 'removed' } }]), 3, 'back-fill')
  // An update whose append landed and whose entry write did not (a crash between them).
  await write(log, upsert('changed', '2030-01-01T00:00:00.000Z', { status: 'draft' }))
  t.equal(await log.reconcile(entries), 2, 'the entry as it is; a tombstone for the one gone')
  const records = (await log.since(0, 10, main)).records
  t.strictSame(records.map(r => [r.seq, r.slug, r.op, r.status, r.at]), [
    [1, 'kept', 'upsert', 'published', '2025-01-02T00:00:00.000Z'],
    [5, 'changed', 'upsert', 'published', '2025-01-03T00:00:00.000Z'],
    [6, 'removed', 'delete', null, records[2]?.at]
  ], 'in the order of their times: the entry\'s, then now')
  t.ok((records[2]?.at ?? '') > '2025-01-03')
  t.equal(await log.reconcile(entries), 0, 'nothing left to do')
})

t.test('the file store reconciles its log at every open: a crash between append and entry write, files changed while it was stopped', async t => {
  const dataDir = tempDir(t)
  const store = createStore('file', { dataDir })
  await store.open()
  t.teardown(() => store.close())
  const scope = { environment: 'default', locale: null }
  const { entry: kept } = await store.create(scope, 'posts', { slug: 'kept', status: 'published', data: {} })
  const { entry: changed } = await store.create(scope, 'posts', { slug: 'changed', status: 'published', data: {} })
  await store.create(scope, 'posts', { slug: 'removed', status: 'published', data: {} })
  await store.close()
  // An update whose append landed and whose entry write did not (a crash between them).
  const log = await openLog(t, dataDir)
  await write(log, upsert('changed', '2030-01-01T00:00:00.000Z', { status: 'draft' }))
  await log.close()
  // While the server was stopped: an entry file removed, one written by hand.
  const dir = path.join(dataDir, 'content', 'default', 'posts', '_')
  rmSync(path.join(dir, 'removed.json'))
  writeFileSync(path.join(dir, 'handmade.json'), JSON.stringify({ status: 'draft', created_at: AT, updated_at: AT, data: {} }))

  await store.open()
  const records = (await store.changes.since(0, 10, main)).records
  // In the order of their times: the hand-written file's, the entry's, then now.
  t.strictSame(records.map(r => [r.seq, r.slug, r.op, r.status, r.at]), [
    [1, 'kept', 'upsert', 'published', kept.updatedAt],
    [5, 'handmade', 'upsert', 'draft', AT],
    [6, 'changed', 'upsert', 'published', changed.updatedAt],
    [7, 'removed', 'delete', null, records[3]?.at]
  ])
  t.ok((records[3]?.at ?? '') >= changed.updatedAt)
  await store.close()
  await store.open()
  t.equal(await store.changes.latestSeq(), 7, 'nothing left to do at the next open')
  t.equal((await store.create(scope, 'posts', { slug: 'next', status: 'published', data: {} })).seq, 8)
})

t.test('the log is refused before open and after close', async t => {
  const log = new FileChangeLog({ dir: tempDir(t), retentionDays: 30 })
  t.throws(() => log.begin(upsert('a', AT)), /not open/)
  await log.open()
  await log.close()
  await log.close()
  t.throws(() => log.begin(upsert('a', AT)), /not open/)
  t.throws(() => new FileChangeLog({ dir: '.', retentionDays: 0 }), /retentionDays must be a positive integer/)
})

// What only the SQLite store's editorial side has (the rules every store shares are in
// editorial.test.ts and layout.test.ts): its argument checks, a database from before the editorial
// tables, layout moves in pages and with two connections, and how a clash treats drafts.
import path from 'node:path'
import t, { type Test } from 'tap'
import Database from '../../../lib/sqlite-driver.js'
import { CmsError } from '../../../lib/errors.js'
import { SqliteStore, type StoreOptions } from '../../../lib/store/index.js'
import type { ScheduleInput } from '../../../types/editorial.js'
import type { Scope } from '../../../types/scope.js'
import { tempDir } from '../../helper.js'
import { allEntries } from '../../fixtures/stores.js'

const scope: Scope = { environment: 'default', locale: null }
const en: Scope = { environment: 'default', locale: 'en' }
const schedule = (extra: Partial<ScheduleInput> = {}): ScheduleInput =>
  ({ id: 's1', scope, collection: 'posts', slug: 'p', action: 'publish', at: '2026-03-01T10:00:00.000Z', ...extra })

async function open (t: Test, dataDir: string, options: Partial<StoreOptions> = {}): Promise<SqliteStore> {
  const store = new SqliteStore({ dataDir, ...options })
  await store.open()
  t.teardown(() => store.close())
  return store
}

async function rejectsCode (t: Test, promise: Promise<unknown>, code: string, what: string): Promise<void> {
  try {
    await promise
    t.fail(`${what}: expected ${code}`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === code, `${what}: ${code}`, { err })
  }
}

t.test('arguments are checked', async t => {
  const store = await open(t, path.join(tempDir(t), 'data'))
  await store.create(scope, 'posts', { slug: 'p', status: 'published', data: {} })
  await rejectsCode(t, store.addSchedule(schedule({ id: 'a/b' })), 'BAD_REQUEST', 'an id that is not URL-safe')
  await rejectsCode(t, store.addSchedule(schedule({ action: 'archive' as 'publish' })), 'BAD_REQUEST', 'an unknown action')
  await rejectsCode(t, store.addSchedule(schedule({ at: '2026-03-01' })), 'BAD_REQUEST', 'a time without milliseconds')
  await rejectsCode(t, store.addSchedule(schedule({ slug: 'Not A Slug' })), 'BAD_REQUEST', 'a slug')
  await store.addSchedule(schedule())
  await rejectsCode(t, store.addSchedule(schedule()), 'CONFLICT', 'an id taken')
  await rejectsCode(t, store.putDraft(scope, 'posts', 'p', [] as unknown as Record<string, unknown>), 'BAD_REQUEST', 'draft data that is no object')
  await rejectsCode(t, store.claimSchedules('me', 'soon', 1000, 1), 'BAD_REQUEST', 'a claim time')
  await t.rejects(store.claimSchedules('', '2026-03-01T10:00:00.000Z', 1000, 1), TypeError, 'an owner')
  await t.rejects(store.claimSchedules('me', '2026-03-01T10:00:00.000Z', -1, 1), RangeError, 'a lease')
  await t.rejects(store.versions(scope, 'posts', 'p', -1, 0, 10), RangeError, 'keep')
  await t.rejects(store.versions(scope, 'posts', 'p', 5, 0.5, 10), RangeError, 'offset')
  await t.rejects(store.listSchedules('pending', {}, 0, -2), RangeError, 'limit')
  await t.rejects(store.version(scope, 'posts', 'p', 1, Number.NaN), RangeError, 'keep of a version')
  t.equal(await store.version(scope, 'posts', 'p', 1.5, 5), undefined, 'no such number')
  await t.rejects(store.update(scope, 'posts', { slug: 'p', status: 'published', data: {}, keepVersions: -1 }), RangeError, 'keepVersions')
  await rejectsCode(t, store.getDraft({ environment: 'a b', locale: null }, 'posts', 'p'), 'BAD_REQUEST', 'names')
  t.equal((await store.versions(scope, 'posts', 'p', 5, 0, 10)).total, 0, 'nothing was written by the refused calls')
  await store.close()
  await t.rejects(store.getSchedule('s1'), /not open/, 'a closed store refuses')
  await t.rejects(store.putDraft(scope, 'posts', 'p', {}), /not open/)
})

t.test('a write drops the versions past keepVersions from the table, not only from view', async t => {
  const store = await open(t, path.join(tempDir(t), 'data'))
  const write = (n: number, keepVersions: number): { slug: string, status: 'published', data: Record<string, unknown>, keepVersions: number } =>
    ({ slug: 'p', status: 'published', data: { n }, keepVersions })
  await store.create(scope, 'posts', write(1, 3))
  for (let n = 2; n <= 4; n++) await store.update(scope, 'posts', write(n, 3))
  // Read with a larger keep: only rows still stored can show.
  t.same((await store.versions(scope, 'posts', 'p', 50, 0, 50)).items.map(v => v.version), [4, 3, 2], 'the fourth write dropped the first')
  await store.update(scope, 'posts', write(5, 1))
  t.same((await store.versions(scope, 'posts', 'p', 50, 0, 50)).items.map(v => v.version), [5], 'a lowered setting drops the older ones at the next write')
  t.equal(await store.version(scope, 'posts', 'p', 4, 50), undefined)
})

t.test('a database from before the editorial tables and layouts opens, and its content moves', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  let store = await open(t, dataDir)
  await store.create(scope, 'posts', { slug: 'old', status: 'published', data: { title: 'Old' } })
  await store.close()
  const db = new Database(path.join(dataDir, 'lectern.db'))
  db.exec("DROP TABLE versions; DROP TABLE drafts; DROP TABLE schedules; DELETE FROM meta WHERE key = 'layout'")
  db.close()

  store = await open(t, dataDir, { locales: ['en'] })
  t.same((await store.get(en, 'posts', 'old'))?.data, { title: 'Old' }, 'no layout remembered: unset settings, so its content is the default locale\'s')
  await store.update(en, 'posts', { slug: 'old', status: 'published', data: { title: 'New' }, keepVersions: 5 })
  t.same((await store.versions(en, 'posts', 'old', 5, 0, 5)).items.map(v => v.version), [1], 'the new tables work')
})

t.test('moves in pages; a second connection opening after the first moves nothing', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  let store = await open(t, dataDir)
  await Promise.all(Array.from({ length: 1205 }, async (_, i) => await store.create(scope, 'posts', { slug: `e-${i}`, status: 'published', data: { i } })))
  const seq = await store.changes.latestSeq()
  await store.close()
  store = await open(t, dataDir, { locales: ['en'] })
  const other = await open(t, dataDir, { locales: ['en'] })
  t.equal(await store.changes.latestSeq(), seq + 2 * 1205, 'a tombstone and an upsert per entry, once')
  t.equal(await other.changes.latestSeq(), seq + 2 * 1205)
  t.same([...new Set((await allEntries(other)).map(e => e.scope.locale))], ['en'], 'every entry moved')
})

t.test('a clash: the target\'s draft stays with a published moved entry without one, and goes with a draft one', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  let store = await open(t, dataDir)
  for (const slug of ['keep', 'drop']) {
    await store.create(en, 'posts', { slug, status: 'published', data: { side: 'target' } })
    await store.putDraft(en, 'posts', slug, { side: 'target draft' })
  }
  await store.create(scope, 'posts', { slug: 'keep', status: 'published', data: { side: 'moved' } })
  await store.create(scope, 'posts', { slug: 'drop', status: 'draft', data: { side: 'moved' } })
  await store.close()
  store = await open(t, dataDir, { locales: ['en'] })
  t.same((await store.getDraft(en, 'posts', 'keep'))?.data, { side: 'target draft' }, 'still a pending draft of a published entry')
  t.equal(await store.getDraft(en, 'posts', 'drop'), undefined, 'a draft entry has no pending draft')
  t.same((await store.version(en, 'posts', 'drop', 1, 5))?.data, { side: 'target' }, 'the displaced entry is version 1')
})

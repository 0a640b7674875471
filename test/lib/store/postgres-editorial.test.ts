// The PostgreSQL store's editorial side (lib/store/postgres-editorial.ts) where only it can be seen:
// several stores on one schema (replicas of one database) racing claims and opening with a new
// layout together, and versions, drafts and schedules decided in the write's own commit.
import path from 'node:path'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { PostgresStore } from '../../../lib/store/postgres.js'
import type { StoreOptions } from '../../../lib/store/index.js'
import type { ScheduleInput } from '../../../types/editorial.js'
import type { EntryInput } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import { postgresUrl } from '../../fixtures/postgres.js'

const scope = { environment: 'default', locale: null }
const write = (slug: string, data: Record<string, unknown> = {}, more: Partial<EntryInput> = {}): EntryInput =>
  ({ slug, status: 'published', data, keepVersions: 3, ...more })
const schedule = (id: string, slug: string, at: string, more: Partial<ScheduleInput> = {}): ScheduleInput =>
  ({ id, scope, collection: 'posts', slug, action: 'publish', at, ...more })

/** A data dir and its schema: stores made on it share the data, as replicas do. */
async function database (t: Test): Promise<{ dataDir: string, databaseUrl: string }> {
  const dataDir = path.join(tempDir(t), 'data')
  return { dataDir, databaseUrl: await postgresUrl(t, path.resolve(dataDir)) }
}

/** An open store on `db`, closed at the end of `t`. */
async function opened (t: Test, db: { dataDir: string, databaseUrl: string }, options: Partial<StoreOptions> = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ ...db, ...options })
  t.teardown(async () => { await store.close() })
  await store.open()
  return store
}

const code = (err: unknown): unknown => (err as CmsError).code

t.test('versions: written in the write\'s savepoint, numbered on across a delete, pruned past the limit', async t => {
  const store = await opened(t, await database(t))
  // One batch: the second create of the slug fails in its savepoint and keeps no version.
  const outcomes = await Promise.allSettled([store.create(scope, 'posts', write('a', { n: 1 })), store.create(scope, 'posts', write('a', { n: 2 }))])
  t.same(outcomes.map(o => o.status), ['fulfilled', 'rejected'])
  t.same((await store.versions(scope, 'posts', 'a', 50, 0, 10)).items.map(v => v.version), [1], 'the refused create kept none')
  await t.rejects(store.update(scope, 'posts', write('nope')), { code: 'NOT_FOUND' })
  t.equal((await store.versions(scope, 'posts', 'nope', 50, 0, 10)).total, 0, 'an update of nothing keeps none')
  await store.create(scope, 'posts', write('u', { title: 'T' }))
  await t.rejects(store.create(scope, 'posts', write('v', { title: 'T' }, { unique: ['title'] })), { code: 'VALIDATION_FAILED' })
  t.equal((await store.versions(scope, 'posts', 'v', 50, 0, 10)).total, 0, 'a create refused for a taken unique value keeps none')
  const first = await store.update(scope, 'posts', write('a', { n: 3 }, { status: 'draft' }))
  await store.update(scope, 'posts', write('a', { n: 4 }, { keepVersions: 0 }))
  const two = await store.version(scope, 'posts', 'a', 2, 50)
  t.same(two && { ...two }, { version: 2, status: 'draft', data: { n: 3 }, createdAt: first.entry.updatedAt, entryCreatedAt: first.entry.createdAt })
  t.ok(Object.isFrozen(two) && Object.isFrozen(two?.data), 'handed out frozen')
  t.equal((await store.versions(scope, 'posts', 'a', 50, 0, 10)).total, 2, 'keepVersions 0 kept none')
  await store.delete(scope, 'posts', 'a')
  await store.create(scope, 'posts', write('a', { n: 5 }))
  await store.update(scope, 'posts', write('a', { n: 6 }))
  const listed = await store.versions(scope, 'posts', 'a', 50, 0, 10)
  t.same(listed.items.map(v => v.version), [4, 3, 2], 'numbering went on (keepVersions 0 kept none); versions older than the newest 3 dropped')
  t.same((await store.versions(scope, 'posts', 'a', 2, 1, 10)), { items: [listed.items[1]], total: 2 }, 'only the newest `keep` count')
  t.equal(await store.version(scope, 'posts', 'a', 2, 2), undefined, 'outside the newest `keep`')
  t.same((await store.versions(scope, 'posts', 'a', 0, 0, 10)), { items: [], total: 0 })
  t.same((await store.version(scope, 'posts', 'a', 4, 1))?.data, { n: 6 })
  t.same((await store.execute("SELECT version FROM entry_versions WHERE slug = 'a' ORDER BY version")).rows, [{ version: 2 }, { version: 3 }, { version: 4 }], 'version 1 pruned')
})

t.test('drafts: decided against the committed entry; no change record; cleared with the write that publishes it', async t => {
  const store = await opened(t, await database(t))
  await t.rejects(store.putDraft(scope, 'posts', 'a', { x: 1 }), { code: 'NOT_FOUND' })
  await store.create(scope, 'posts', write('a', {}, { status: 'draft' }))
  await t.rejects(store.putDraft(scope, 'posts', 'a', { x: 1 }), { code: 'CONFLICT', message: "Entry 'a' is a draft: edit it directly." })
  await store.update(scope, 'posts', write('a'))
  await t.rejects(store.putDraft(scope, 'posts', 'a', [] as unknown as Record<string, unknown>), { code: 'BAD_REQUEST' })
  const seq = await store.changes.latestSeq()
  const revision = store.revision(scope, 'posts')
  const made = await store.putDraft(scope, 'posts', 'a', { x: 1 })
  const replaced = await store.putDraft(scope, 'posts', 'a', { x: 2 })
  t.equal(replaced.createdAt, made.createdAt, 'replacing keeps created_at')
  t.same((await store.getDraft(scope, 'posts', 'a'))?.data, { x: 2 })
  t.equal(await store.changes.latestSeq(), seq, 'no change record')
  t.equal(store.revision(scope, 'posts'), revision)
  t.equal((await store.versions(scope, 'posts', 'a', 50, 0, 10)).total, 2, 'no version')
  await store.update(scope, 'posts', write('a', {}, { status: 'draft' }))
  t.ok(await store.getDraft(scope, 'posts', 'a'), 'an unpublishing update keeps it')
  await store.update(scope, 'posts', write('a', { x: 2 }, { clearDraft: true }))
  t.equal(await store.getDraft(scope, 'posts', 'a'), undefined, 'published: gone')
  await store.putDraft(scope, 'posts', 'a', { x: 3 })
  t.equal(await store.deleteDraft(scope, 'posts', 'a'), true)
  t.equal(await store.deleteDraft(scope, 'posts', 'a'), false)
  t.equal(await store.getDraft(scope, 'posts', 'a'), undefined)
})

t.test('a draft or schedule racing the entry\'s delete over two stores never outlives it', async t => {
  const db = await database(t)
  const [one, two] = [await opened(t, db), await opened(t, db)]
  for (let round = 0; round < 15; round++) {
    const slug = `r${round}`
    await one.create(scope, 'posts', write(slug))
    const [, draft, added] = await Promise.allSettled([
      one.delete(scope, 'posts', slug), two.putDraft(scope, 'posts', slug, { round }), two.addSchedule(schedule(`s${round}`, slug, '2030-01-01T00:00:00.000Z'))
    ])
    for (const outcome of [draft, added]) if (outcome.status === 'rejected') t.equal(code(outcome.reason), 'NOT_FOUND')
    t.equal(await two.getDraft(scope, 'posts', slug), undefined, `round ${round}: no draft`)
    t.equal(await two.getSchedule(`s${round}`), undefined, `round ${round}: no schedule`)
  }
})

t.test('schedules: stored while the entry exists, listed in order, finished by their claim\'s owner only', async t => {
  const store = await opened(t, await database(t))
  await t.rejects(store.addSchedule(schedule('x', 'a', '2030-01-01T00:00:00.000Z')), { code: 'NOT_FOUND' })
  await store.create(scope, 'posts', write('a'))
  await store.create({ environment: 'staging', locale: 'en' }, 'posts', write('b'))
  const due = ['2030-01-01T00:00:03.000Z', '2030-01-01T00:00:01.000Z', '2030-01-01T00:00:01.000Z', '2030-01-01T00:00:02.000Z']
  for (const [i, at] of due.entries()) await store.addSchedule(schedule(`s${3 - i}`, 'a', at))
  const other = await store.addSchedule(schedule('t', 'b', '2030-01-01T00:00:00.000Z', { scope: { environment: 'staging', locale: 'en' }, action: 'unpublish' }))
  t.same(other.scope, { environment: 'staging', locale: 'en' })
  await t.rejects(store.addSchedule(schedule('t', 'a', '2030-01-01T00:00:00.000Z')), { code: 'CONFLICT' })
  await t.rejects(store.addSchedule(schedule('u', 'a', '2030-01-01T00:00:00.000Z', { action: 'archive' as 'publish' })), /check constraint/, 'what the table refuses is no CONFLICT')
  t.same((await store.listSchedules('pending', {}, 0, 10)).items.map(s => s.id), ['t', 's1', 's2', 's0', 's3'], 'by at, then id')
  t.same(await store.listSchedules('pending', { environment: 'default' }, 1, 2).then(p => ({ ids: p.items.map(s => s.id), total: p.total })), { ids: ['s2', 's0'], total: 4 })
  t.same(await store.listSchedules('pending', { environment: 'default' }, 9, 2), { items: [], total: 4 }, 'the total past the last page too')
  t.equal(await store.nextScheduleAt(), '2030-01-01T00:00:00.000Z')
  const now = '2030-01-01T00:00:01.500Z'
  t.same((await store.claimSchedules('me', now, 1000, 10)).map(s => s.id), ['t', 's1', 's2'], 'due ones, soonest first')
  t.same(await store.claimSchedules('you', now, 1000, 10), [], 'held by a live claim')
  t.same((await store.claimSchedules('you', '2030-01-01T00:00:02.500Z', 1000, 1)).map(s => s.id), ['t'], 'a lease that ran out is claimed again')
  t.equal(await store.finishSchedule('t', 'me', null), false, 'the claim was lost')
  t.equal(await store.finishSchedule('t', 'you', null), true)
  t.equal(await store.getSchedule('t'), undefined, 'done: gone')
  t.equal(await store.finishSchedule('s1', 'me', 'Validation failed: title'), true)
  t.same(await store.getSchedule('s1').then(s => s && { status: s.status, error: s.error }), { status: 'failed', error: 'Validation failed: title' })
  t.same((await store.listSchedules('failed', {}, 0, 10)).items.map(s => s.id), ['s1'])
  t.same((await store.claimSchedules('me', '2030-01-02T00:00:00.000Z', 1000, 10)).map(s => s.id), ['s2', 's0', 's3'], 'a failed one is never claimed; a lapsed claim is')
  t.equal(await store.deleteSchedule('s3'), true)
  t.equal(await store.deleteSchedule('s3'), false)
  await store.putDraft(scope, 'posts', 'a', { d: 1 })
  await store.delete(scope, 'posts', 'a')
  t.same(await store.listSchedules('pending', {}, 0, 10).then(p => p.total), 0, 'the entry\'s delete took its schedules')
  t.equal((await store.listSchedules('failed', {}, 0, 10)).total, 0, 'failed ones too')
  t.equal(await store.getDraft(scope, 'posts', 'a'), undefined, 'and its draft')
  t.equal(await store.nextScheduleAt(), null)
})

t.test('claims racing over two stores: each schedule handed out once, over many rounds', async t => {
  const db = await database(t)
  const [one, two] = [await opened(t, db), await opened(t, db)]
  await one.create(scope, 'posts', write('a'))
  const ids = Array.from({ length: 60 }, (_, i) => `s${String(i).padStart(2, '0')}`)
  for (const id of ids) await one.addSchedule(schedule(id, 'a', '2030-01-01T00:00:00.000Z'))
  const claimed: string[] = []
  for (let round = 0; claimed.length < ids.length && round < 100; round++) {
    const batches = await Promise.all([one, two, one, two].map(async (store, i) => await store.claimSchedules(`owner${i}`, '2030-01-01T00:00:01.000Z', 60_000, 3)))
    claimed.push(...batches.flat().map(s => s.id))
  }
  t.equal(claimed.length, ids.length, 'every one claimed')
  t.same([...new Set(claimed)].sort(), ids, 'none twice')
})

t.test('two stores opening together with a new layout move the content once', async t => {
  const db = await database(t)
  const before = await opened(t, db)
  await before.create(scope, 'posts', write('a', { v: 1 }))
  await before.create(scope, 'posts', write('b'))
  await before.update(scope, 'posts', write('a', { v: 2 }))
  await before.putDraft(scope, 'posts', 'a', { draft: true })
  await before.addSchedule(schedule('s', 'a', '2030-01-01T00:00:00.000Z'))
  const fingerprint = await before.contentFingerprint()
  const seq = await before.changes.latestSeq()
  await before.close()
  const logged: Array<{ msg: string, obj: object }> = []
  const log = { info: (obj: object, msg: string) => { logged.push({ obj, msg }) }, warn () {}, error () {} }
  const options = { locales: ['en', 'de'], environments: ['live', 'staging'], log }
  const stores = [new PostgresStore({ ...db, ...options }), new PostgresStore({ ...db, ...options })]
  t.teardown(async () => { for (const store of stores) await store.close() })
  await Promise.all(stores.map(async store => { await store.open() }))
  const [one] = stores as [PostgresStore]
  const moved = { environment: 'live', locale: 'en' }
  t.same((await one.get(moved, 'posts', 'a'))?.data, { v: 2 })
  t.equal(await one.get(scope, 'posts', 'a'), undefined, 'nothing left under the old labels')
  t.same((await one.versions(moved, 'posts', 'a', 50, 0, 10)).items.map(v => v.version), [2, 1], 'versions moved')
  t.same((await one.getDraft(moved, 'posts', 'a'))?.data, { draft: true }, 'the draft moved')
  t.same((await one.getSchedule('s'))?.scope, moved, 'the schedule moved')
  t.equal(await one.changes.latestSeq(), seq + 2 * 2 * 2, 'per move and entry, a tombstone and an upsert: once')
  const page = await one.changes.since(seq, 100, { environment: 'live', locale: 'en' })
  t.same(page.records.map(r => [r.slug, r.op]), [['a', 'upsert'], ['b', 'upsert']])
  const old = await one.changes.since(0, 100, scope)
  t.same(old.records.map(r => [r.slug, r.op]), [['a', 'delete'], ['b', 'delete']], 'tombstones at the old keys')
  t.not(await one.contentFingerprint(), fingerprint)
  const moves = logged.filter(line => line.msg === 'stored content moved to the new layout')
  t.equal(moves.length, 1, 'one log line, by the store that moved')
  t.match(moves[0]?.obj, { moves: [{ dimension: 'environment', from: 'default', to: 'live', entries: 2, versions: 3 }, { dimension: 'locale', from: '', to: 'en', entries: 2, displaced: 0, versions: 3, drafts: 1, schedules: 1 }] })
  t.same((await one.execute("SELECT value FROM lectern_meta WHERE key = 'layout'")).rows, [{ value: '{"locale":"en","environment":"live"}' }])
})

t.test('a layout move onto a taken slug: the moved entry wins, the other is kept as a version', async t => {
  const db = await database(t)
  const before = await opened(t, db)
  const en = { environment: 'default', locale: 'en' }
  await before.create(scope, 'posts', write('x', { from: 'none', n: 1 }))
  await before.update(scope, 'posts', write('x', { from: 'none', n: 2 }))
  await before.putDraft(scope, 'posts', 'x', { moved: 'draft' })
  await before.addSchedule(schedule('moved', 'x', '2030-01-01T00:00:00.000Z'))
  const target = await before.create(en, 'posts', write('x', { from: 'en' }))
  await before.putDraft(en, 'posts', 'x', { target: 'draft' })
  await before.addSchedule(schedule('target', 'x', '2030-01-01T00:00:00.000Z', { scope: en }))
  await before.close()
  const after = await opened(t, db, { locales: ['en'] })
  t.same((await after.get(en, 'posts', 'x'))?.data, { from: 'none', n: 2 }, 'the moved entry wins')
  const versions = await after.versions(en, 'posts', 'x', 50, 0, 10)
  t.same(versions.items.map(v => v.version), [4, 3, 2, 1], 'the target\'s 1, the displaced entry 2, the moved ones after')
  t.same(await after.version(en, 'posts', 'x', 2, 50).then(v => v && { data: v.data, createdAt: v.createdAt }), { data: { from: 'en' }, createdAt: target.entry.updatedAt })
  t.same((await after.version(en, 'posts', 'x', 4, 50))?.data, { from: 'none', n: 2 })
  t.same((await after.getDraft(en, 'posts', 'x'))?.data, { moved: 'draft' }, 'the moved draft replaced the target\'s')
  t.same((await after.listSchedules('pending', {}, 0, 10)).items.map(s => [s.id, s.scope.locale]), [['moved', 'en'], ['target', 'en']], 'both schedules kept')
  await after.close()
  const again = await opened(t, db, { locales: ['en'] })
  t.equal((await again.versions(en, 'posts', 'x', 50, 0, 10)).total, 4, 'reopened with the same layout: nothing moves again')
  await again.close()
  const off = await opened(t, db)
  t.same((await off.get(scope, 'posts', 'x'))?.data, { from: 'none', n: 2 }, 'locales off again: back under no locale')
  t.equal((await off.versions(scope, 'posts', 'x', 50, 0, 10)).total, 4)
})

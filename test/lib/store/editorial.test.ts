// One suite, every store (test/fixtures/stores.ts): the editorial rules of types/editorial.ts
// (contract §13): versions written by the entry writes themselves, pending drafts, schedules and
// their claims, and how the entry writes (clearDraft, delete) meet them.
import path from 'node:path'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { createStore, type StoreOptions } from '../../../lib/store/index.js'
import type { ScheduleFilter, ScheduleInput } from '../../../types/editorial.js'
import type { Scope } from '../../../types/scope.js'
import type { ContentStore, EntryInput } from '../../../types/store.js'
import { sourceUrl, tempDir } from '../../helper.js'
import { killWhen } from '../../fixtures/processes.js'
import { postgresUrl } from '../../fixtures/postgres.js'
import { storeFactories } from '../../fixtures/stores.js'

const scope: Scope = { environment: 'default', locale: null }
const staging: Scope = { environment: 'staging', locale: null }
const START = Date.parse('2026-03-01T10:00:00.000Z')

const input = (slug: string, data: Record<string, unknown>, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ slug, status: 'published', data, ...extra })
const at = (seconds: number): string => new Date(START + seconds * 1000).toISOString()
const schedule = (id: string, slug: string, seconds: number, extra: Partial<ScheduleInput> = {}): ScheduleInput =>
  ({ id, scope, collection: 'posts', slug, action: 'publish', at: at(seconds), ...extra })

async function rejectsWith (t: Test, promise: Promise<unknown>, code: string, what: string): Promise<void> {
  try {
    await promise
    t.fail(`${what}: expected ${code}`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === code, `${what}: ${code}`, { err })
  }
}

/**
 * The kill -9 test's child: writers that each take entries through every editorial step, printing
 * `<step> <slug>` once the step's promise resolved (what was acknowledged), until it is killed.
 */
function crashScript (kind: string, options: StoreOptions): string {
  return `const { createStore } = await import(${JSON.stringify(sourceUrl('lib', 'store', 'index.ts'))})
const store = createStore(${JSON.stringify(kind)}, ${JSON.stringify(options)})
await store.open()
const scope = { environment: 'default', locale: null }
const ack = (step, slug) => { process.stdout.write(step + ' ' + slug + '\\n') }
const writer = async w => {
  for (let n = 0; ; n++) {
    const slug = 'w' + w + '-' + n
    const write = (data, extra = {}) => ({ slug, status: 'published', data, keepVersions: 5, ...extra })
    await store.create(scope, 'posts', write({ n }))
    ack('entry', slug)
    await store.update(scope, 'posts', write({ n, v: 2 }))
    ack('version', slug)
    await store.putDraft(scope, 'posts', slug, { draft: n })
    ack('draft', slug)
    await store.addSchedule({ id: slug, scope, collection: 'posts', slug, action: 'unpublish', at: '2030-01-01T00:00:00.000Z' })
    ack('schedule', slug)
    await store.update(scope, 'posts', write({ n, v: 3 }, { clearDraft: true }))
    ack('published', slug)
    for (const claimed of await store.claimSchedules('w' + w, '2031-01-01T00:00:00.000Z', 3600000, 1)) {
      if (await store.finishSchedule(claimed.id, 'w' + w, 'failed ' + claimed.id)) ack('failed', claimed.id)
    }
  }
}
for (let w = 0; w < 6; w++) writer(w)
`
}

/** Runs the crash child until it has acknowledged `acks` steps, kills it (-9), and returns the acknowledged steps per slug. */
async function crashAfter (t: Test, kind: string, options: StoreOptions, acks: number): Promise<Map<string, Set<string>>> {
  const lines = await killWhen(t, crashScript(kind, options), stdout => stdout.split('\n').length > acks)
  const steps = new Map<string, Set<string>>()
  // Every whole line was acknowledged; a line cut by the kill was not.
  for (const line of lines) {
    const [step, slug] = line.split(' ') as [string, string]
    steps.set(slug, (steps.get(slug) ?? new Set()).add(step))
  }
  return steps
}

/** A clock that moves one second per call: every write and record gets its own time. */
function tickingClock (): () => Date {
  let ms = START
  return () => new Date(ms += 1000)
}

for (const factory of storeFactories) {
  t.test(`store=${factory.name}`, async t => {
    const open = async (t: Test, dataDir: string, options: Partial<StoreOptions> = {}): Promise<ContentStore> => {
      const store = factory.create({ dataDir, clock: tickingClock(), ...options })
      await store.open()
      t.teardown(() => store.close())
      return store
    }
    const fresh = async (t: Test): Promise<ContentStore> => await open(t, path.join(tempDir(t), 'data'))

    t.test('versions: written by creates and updates, newest first, pruned to keepVersions', async t => {
      const store = await fresh(t)
      const { entry: first } = await store.create(scope, 'posts', input('a', { title: 'v1' }, { keepVersions: 3 }))
      const written = [first]
      for (let i = 2; i <= 5; i++) {
        written.push((await store.update(scope, 'posts', input('a', { title: `v${i}` }, { keepVersions: 3, status: i === 4 ? 'draft' : 'published' }))).entry)
      }
      const page = await store.versions(scope, 'posts', 'a', 10, 0, 10)
      t.equal(page.total, 3, 'the write dropped what fell out of the newest keepVersions')
      t.same(page.items, [5, 4, 3].map(n => ({
        version: n,
        status: n === 4 ? 'draft' : 'published',
        createdAt: written[n - 1]?.updatedAt,
        entryCreatedAt: first.createdAt
      })), 'newest first: number, status, the write\'s time and the entry\'s created_at')
      t.notOk('data' in (page.items[0] as object), 'summaries carry no data')
      const v5 = await store.version(scope, 'posts', 'a', 5, 10)
      t.same(v5, { version: 5, status: 'published', data: { title: 'v5' }, createdAt: written[4]?.updatedAt, entryCreatedAt: first.createdAt })
      t.ok(Object.isFrozen(v5) && Object.isFrozen(v5?.data), 'handed out frozen')
      t.equal(await store.version(scope, 'posts', 'a', 2, 10), undefined, 'a dropped version is gone')
      t.equal(await store.version(scope, 'posts', 'a', 6, 10), undefined, 'a version never written')

      t.same((await store.versions(scope, 'posts', 'a', 10, 1, 1)).items.map(v => v.version), [4], 'offset and limit')
      t.same(await store.versions(scope, 'posts', 'a', 10, 5, 10), { items: [], total: 3 })
      const lowered = await store.versions(scope, 'posts', 'a', 2, 0, 10)
      t.same([lowered.total, lowered.items.map(v => v.version)], [2, [5, 4]], 'a lowered keep hides the older ones at once')
      t.equal(await store.version(scope, 'posts', 'a', 3, 2), undefined, 'outside the newest keep')
      t.same(await store.versions(scope, 'posts', 'a', 0, 0, 10), { items: [], total: 0 }, 'keep 0: none')
      t.equal(await store.version(scope, 'posts', 'a', 5, 0), undefined)
      t.same(await store.versions(scope, 'posts', 'zz', 10, 0, 10), { items: [], total: 0 }, 'an entry never written')
      t.same(await store.versions(staging, 'posts', 'a', 10, 0, 10), { items: [], total: 0 }, 'per environment')
    })

    t.test('versions: none without keepVersions; numbering goes on across a delete and re-create', async t => {
      const store = await fresh(t)
      await store.create(scope, 'posts', input('plain', { n: 1 }))
      await store.update(scope, 'posts', input('plain', { n: 2 }, { keepVersions: 0 }))
      t.same(await store.versions(scope, 'posts', 'plain', 50, 0, 50), { items: [], total: 0 }, 'keepVersions absent or 0: no version')

      await store.create(scope, 'posts', input('a', { n: 1 }, { keepVersions: 50 }))
      await store.update(scope, 'posts', input('a', { n: 2 }, { keepVersions: 50 }))
      await store.delete(scope, 'posts', 'a')
      t.same((await store.versions(scope, 'posts', 'a', 50, 0, 50)).items.map(v => v.version), [2, 1], 'versions outlive the delete')
      const { entry } = await store.create(scope, 'posts', input('a', { n: 3 }, { keepVersions: 50 }))
      const page = await store.versions(scope, 'posts', 'a', 50, 0, 50)
      t.same(page.items.map(v => v.version), [3, 2, 1], 'the re-create continues the numbering')
      t.equal(page.items[0]?.entryCreatedAt, entry.createdAt, 'with the new entry\'s created_at')
      t.not(page.items[1]?.entryCreatedAt, entry.createdAt)
      // Numbering follows the highest ever stored, not how many are kept.
      await store.update(scope, 'posts', input('a', { n: 4 }, { keepVersions: 1 }))
      await store.update(scope, 'posts', input('a', { n: 5 }, { keepVersions: 50 }))
      t.same((await store.versions(scope, 'posts', 'a', 50, 0, 50)).items.map(v => v.version), [5, 4])
      t.same((await store.version(scope, 'posts', 'a', 5, 50))?.data, { n: 5 })
    })

    t.test('versions: a write that fails stores none', async t => {
      const store = await fresh(t)
      const unique = ['title']
      await store.create(scope, 'posts', input('a', { title: 'A' }, { keepVersions: 10, unique }))
      await store.create(scope, 'posts', input('b', { title: 'B' }, { keepVersions: 10, unique }))
      await rejectsWith(t, store.create(scope, 'posts', input('a', { title: 'Other' }, { keepVersions: 10 })), 'CONFLICT', 'duplicate slug')
      await rejectsWith(t, store.update(scope, 'posts', input('missing', { title: 'M' }, { keepVersions: 10 })), 'NOT_FOUND', 'missing entry')
      await rejectsWith(t, store.update(scope, 'posts', input('b', { title: 'A' }, { keepVersions: 10, unique })), 'VALIDATION_FAILED', 'unique clash')
      // Queued together: the failing ones fail alone, in their own savepoints.
      const outcomes = await Promise.allSettled([
        store.update(scope, 'posts', input('a', { title: 'A2' }, { keepVersions: 10, unique })),
        store.create(scope, 'posts', input('a', { title: 'A3' }, { keepVersions: 10 })),
        store.update(scope, 'posts', input('b', { title: 'A2' }, { keepVersions: 10, unique }))
      ])
      t.same(outcomes.map(o => o.status), ['fulfilled', 'rejected', 'rejected'])
      t.same((await store.versions(scope, 'posts', 'a', 10, 0, 10)).items.map(v => v.version), [2, 1])
      t.same((await store.versions(scope, 'posts', 'b', 10, 0, 10)).items.map(v => v.version), [1])
      t.same(await store.versions(scope, 'posts', 'missing', 10, 0, 10), { items: [], total: 0 })
      t.same((await store.version(scope, 'posts', 'a', 2, 10))?.data, { title: 'A2' })
    })

    t.test('drafts: only of a published entry; they change nothing else', async t => {
      const store = await fresh(t)
      await rejectsWith(t, store.putDraft(scope, 'posts', 'none', { title: 'x' }), 'NOT_FOUND', 'no entry')
      await store.create(scope, 'posts', input('d', { title: 'D' }, { status: 'draft' }))
      await rejectsWith(t, store.putDraft(scope, 'posts', 'd', { title: 'x' }), 'CONFLICT', 'a draft entry')
      const { entry } = await store.create(scope, 'posts', input('p', { title: 'Live' }, { keepVersions: 5 }))
      const revision = store.revision(scope, 'posts')
      const seq = await store.changes.latestSeq()
      const fingerprint = await store.contentFingerprint()

      t.equal(await store.getDraft(scope, 'posts', 'p'), undefined, 'none yet')
      const saved = await store.putDraft(scope, 'posts', 'p', { title: 'Next' })
      t.same(saved.data, { title: 'Next' })
      t.equal(saved.createdAt, saved.updatedAt)
      t.same(await store.getDraft(scope, 'posts', 'p'), saved, 'read back')
      const replaced = await store.putDraft(scope, 'posts', 'p', { title: 'Later', tags: ['a'] })
      t.equal(replaced.createdAt, saved.createdAt, 'replacing keeps created_at')
      t.ok(replaced.updatedAt > saved.updatedAt, 'and moves updated_at')
      const read = await store.getDraft(scope, 'posts', 'p')
      t.same(read, replaced)
      t.ok(Object.isFrozen(read) && Object.isFrozen(read?.data) && Object.isFrozen(read?.data.tags), 'handed out frozen')

      t.same(await store.get(scope, 'posts', 'p'), entry, 'the live entry is unchanged')
      t.equal(store.revision(scope, 'posts'), revision, 'revision unchanged')
      t.equal(await store.changes.latestSeq(), seq, 'no change record')
      t.equal(await store.contentFingerprint(), fingerprint)
      t.equal((await store.versions(scope, 'posts', 'p', 5, 0, 5)).total, 1, 'no version')
      t.equal(await store.getDraft(staging, 'posts', 'p'), undefined, 'per environment')

      t.equal(await store.deleteDraft(scope, 'posts', 'p'), true)
      t.equal(await store.deleteDraft(scope, 'posts', 'p'), false, 'nothing left to discard')
      t.equal(await store.getDraft(scope, 'posts', 'p'), undefined)
      await t.rejects(store.putDraft({ environment: '../x', locale: null }, 'posts', 'p', {}), CmsError, 'names are checked')
    })

    t.test('drafts: a write with clearDraft removes it; others keep it', async t => {
      const store = await fresh(t)
      const unique = ['title']
      await store.create(scope, 'posts', input('taken', { title: 'Taken' }, { unique }))
      await store.create(scope, 'posts', input('p', { title: 'Live' }, { unique }))
      await store.putDraft(scope, 'posts', 'p', { title: 'Draft' })
      await store.update(scope, 'posts', input('p', { title: 'Edit' }, { unique }))
      t.ok(await store.getDraft(scope, 'posts', 'p'), 'a plain update keeps it')
      await rejectsWith(t, store.update(scope, 'posts', input('p', { title: 'Taken' }, { unique, clearDraft: true })), 'VALIDATION_FAILED', 'failed publish')
      t.ok(await store.getDraft(scope, 'posts', 'p'), 'a failed write keeps it')
      await store.update(scope, 'posts', input('p', { title: 'Off' }, { status: 'draft' }))
      t.ok(await store.getDraft(scope, 'posts', 'p'), 'unpublishing keeps it')
      await store.update(scope, 'posts', input('p', { title: 'Draft' }, { clearDraft: true }))
      t.equal(await store.getDraft(scope, 'posts', 'p'), undefined, 'the publish removed it')
      t.equal(await store.deleteDraft(scope, 'posts', 'p'), false)
    })

    t.test('delete removes the entry\'s draft and schedules, not its versions', async t => {
      const store = await fresh(t)
      await store.create(scope, 'posts', input('p', { title: 'Live' }, { keepVersions: 5 }))
      await store.create(scope, 'posts', input('other', { title: 'Other' }))
      await store.putDraft(scope, 'posts', 'p', { title: 'Draft' })
      await store.addSchedule(schedule('s1', 'p', 10))
      await store.addSchedule(schedule('s2', 'p', 20, { action: 'unpublish' }))
      await store.addSchedule(schedule('s3', 'other', 30))
      const [claimed] = await store.claimSchedules('me', at(15), 60_000, 1)
      t.equal(claimed?.id, 's1')
      t.ok(await store.finishSchedule('s1', 'me', 'it broke'))
      t.equal((await store.getSchedule('s1'))?.status, 'failed')

      t.ok(await store.delete(scope, 'posts', 'p'))
      t.equal(await store.getDraft(scope, 'posts', 'p'), undefined, 'draft gone')
      t.equal(await store.getSchedule('s1'), undefined, 'failed schedule gone')
      t.equal(await store.getSchedule('s2'), undefined, 'pending schedule gone')
      t.ok(await store.getSchedule('s3'), 'another entry\'s kept')
      t.equal((await store.versions(scope, 'posts', 'p', 5, 0, 5)).total, 1, 'versions kept')
      await store.create(scope, 'posts', input('p', { title: 'Again' }))
      t.equal(await store.getDraft(scope, 'posts', 'p'), undefined, 'a re-created entry has none')
    })

    t.test('schedules: add, read, list, delete', async t => {
      const store = await fresh(t)
      await rejectsWith(t, store.addSchedule(schedule('x', 'none', 10)), 'NOT_FOUND', 'no entry')
      await store.create(scope, 'posts', input('p', { title: 'P' }))
      await store.create(staging, 'posts', input('p', { title: 'P' }))
      const seq = await store.changes.latestSeq()
      const record = await store.addSchedule(schedule('b', 'p', 20))
      t.same(record, { id: 'b', scope, collection: 'posts', slug: 'p', action: 'publish', at: at(20), createdAt: record.createdAt, status: 'pending', error: null })
      t.match(record.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      t.same(await store.getSchedule('b'), record)
      await store.addSchedule(schedule('a', 'p', 20, { action: 'unpublish' }))
      await store.addSchedule(schedule('c', 'p', 5))
      await store.addSchedule(schedule('d', 'p', 7, { scope: staging }))
      t.equal(await store.changes.latestSeq(), seq, 'no change record')
      await rejectsWith(t, store.addSchedule(schedule('e', 'p', 7, { scope: { environment: 'other', locale: null } })), 'NOT_FOUND', 'not in that environment')

      const all = await store.listSchedules('pending', {}, 0, 10)
      t.same([all.total, all.items.map(s => s.id)], [4, ['c', 'd', 'a', 'b']], 'soonest first, then id')
      t.same((await store.listSchedules('pending', {}, 1, 2)).items.map(s => s.id), ['d', 'a'], 'offset and limit')
      const main = await store.listSchedules('pending', { environment: 'default' }, 0, 10)
      t.same([main.total, main.items.map(s => s.id)], [3, ['c', 'a', 'b']], 'one environment')
      t.same((await store.listSchedules('pending', { environment: 'staging' }, 0, 10)).items.map(s => s.scope), [staging])
      t.same(await store.listSchedules('failed', {}, 0, 10), { items: [], total: 0 })
      t.equal(await store.nextScheduleAt(), at(5))

      t.equal(await store.deleteSchedule('c'), true)
      t.equal(await store.deleteSchedule('c'), false)
      t.equal(await store.getSchedule('c'), undefined)
      t.equal(await store.getSchedule('nope'), undefined)
      t.equal(await store.nextScheduleAt(), at(7))
      for (const id of ['a', 'b', 'd']) await store.deleteSchedule(id)
      t.equal(await store.nextScheduleAt(), null, 'none pending')
    })

    t.test('schedules: a list filtered by entry, collection, locale and environment, counted and paged after the filter', async t => {
      const store = await open(t, path.join(tempDir(t), 'data'), { locales: ['en', 'de'] })
      const en: Scope = { environment: 'default', locale: 'en' }
      const de: Scope = { environment: 'default', locale: 'de' }
      const stagingEn: Scope = { environment: 'staging', locale: 'en' }
      for (const where of [en, de, stagingEn]) {
        for (const slug of ['p', 'q']) await store.create(where, 'posts', input(slug, { title: slug }))
      }
      await store.create(en, 'pages', input('p', { title: 'p' }))
      // Entry p (posts, en, default) has five; the others one each, interleaved in time, q's soonest.
      for (const [i, seconds] of [10, 30, 50, 70, 90].entries()) await store.addSchedule(schedule(`p${i}`, 'p', seconds, { scope: en }))
      await store.addSchedule(schedule('q0', 'q', 5, { scope: en }))
      await store.addSchedule(schedule('q1', 'q', 40, { scope: en }))
      await store.addSchedule(schedule('de', 'p', 20, { scope: de }))
      await store.addSchedule(schedule('st', 'p', 60, { scope: stagingEn }))
      await store.addSchedule(schedule('pg', 'p', 80, { scope: en, collection: 'pages' }))
      const ids = async (filter: ScheduleFilter, offset = 0, limit = 10): Promise<[number, string[]]> => {
        const page = await store.listSchedules('pending', filter, offset, limit)
        return [page.total, page.items.map(s => s.id)]
      }
      t.same(await ids({}), [10, ['q0', 'p0', 'de', 'p1', 'q1', 'p2', 'st', 'p3', 'pg', 'p4']], 'no filter: all, soonest first')

      const entry = { environment: 'default', locale: 'en', collection: 'posts', slug: 'p' }
      t.same(await ids(entry), [5, ['p0', 'p1', 'p2', 'p3', 'p4']], 'one entry\'s only')
      t.same(await ids(entry, 0, 2), [5, ['p0', 'p1']], 'its first page: the total counts the filtered ones')
      t.same(await ids(entry, 2, 2), [5, ['p2', 'p3']], 'its second page: paged after the filter')
      t.same(await ids(entry, 4, 2), [5, ['p4']], 'its last page')
      t.same(await ids(entry, 6, 2), [5, []], 'past the last page: the total still')
      t.same(await ids({ ...entry, slug: 'q' }), [2, ['q0', 'q1']], 'the other entry\'s only')
      t.same(await ids({ ...entry, slug: 'none' }), [0, []], 'an entry without any')

      t.same(await ids({ collection: 'posts', slug: 'p' }), [7, ['p0', 'de', 'p1', 'p2', 'st', 'p3', 'p4']], 'the slug in every locale and environment')
      t.same(await ids({ collection: 'pages' }), [1, ['pg']], 'one collection\'s')
      t.same(await ids({ collection: 'posts', locale: 'de' }), [1, ['de']], 'one locale\'s')
      t.same(await ids({ environment: 'staging', collection: 'posts', slug: 'p' }), [1, ['st']], 'one environment\'s')
      t.same(await ids({ locale: null }), [0, []], 'locale null: only entries without a locale')
      t.same(await store.listSchedules('failed', entry, 0, 10), { items: [], total: 0 }, 'the status still applies')

      const [claimed] = await store.claimSchedules('me', at(10), 60_000, 1)
      t.equal(claimed?.id, 'q0')
      t.ok(await store.finishSchedule('q0', 'me', 'it broke'))
      t.same((await store.listSchedules('failed', { ...entry, slug: 'q' }, 0, 10)).items.map(s => [s.id, s.error]), [['q0', 'it broke']], 'failed ones by entry')
      t.same(await store.listSchedules('failed', entry, 0, 10), { items: [], total: 0 }, 'not another entry\'s')
      t.same(await ids({ ...entry, slug: 'q' }), [1, ['q1']], 'the pending list by entry without it')
    })

    t.test('schedules: claims, leases and finishing', async t => {
      const store = await fresh(t)
      await store.create(scope, 'posts', input('p', { title: 'P' }))
      for (const [id, seconds] of [['s1', 10], ['s2', 20], ['s3', 30], ['s4', 95]] as const) await store.addSchedule(schedule(id, 'p', seconds))

      const mine = await store.claimSchedules('one', at(30), 60_000, 2)
      t.same(mine.map(s => s.id), ['s1', 's2'], 'due ones, soonest first, up to the limit')
      t.same(mine.map(s => s.status), ['pending', 'pending'])
      t.same((await store.claimSchedules('two', at(40), 60_000, 10)).map(s => s.id), ['s3'], 'a live claim is not claimed again; not due: not claimed')
      t.same(await store.claimSchedules('two', at(50), 60_000, 10), [], 'leases still live')
      t.same((await store.claimSchedules('two', at(91), 60_000, 10)).map(s => s.id), ['s1', 's2'], 'a lease that ran out is claimed again')

      t.equal(await store.finishSchedule('s1', 'one', null), false, 'the claim was lost')
      t.ok(await store.getSchedule('s1'), 'still there')
      t.equal(await store.finishSchedule('s4', 'two', null), false, 'never claimed')
      t.equal(await store.finishSchedule('nope', 'two', null), false, 'unknown')
      t.equal(await store.finishSchedule('s1', 'two', null), true, 'the owner ends it')
      t.equal(await store.getSchedule('s1'), undefined, 'done: gone')
      t.equal(await store.finishSchedule('s2', 'two', 'Entry \'p\' failed validation'), true)
      t.match(await store.getSchedule('s2'), { id: 's2', status: 'failed', error: 'Entry \'p\' failed validation' })
      t.equal(await store.finishSchedule('s2', 'two', null), false, 'a failed schedule holds no claim')
      t.same((await store.listSchedules('failed', {}, 0, 10)).items.map(s => [s.id, s.error]), [['s2', 'Entry \'p\' failed validation']])
      t.same((await store.listSchedules('pending', {}, 0, 10)).items.map(s => s.id), ['s3', 's4'], 'failed ones leave the pending list')
      t.same((await store.claimSchedules('three', at(99), 60_000, 10)).map(s => s.id), ['s4'], 'a failed schedule is never claimed; s3 is held')
      t.equal(await store.nextScheduleAt(), at(30), 'claimed ones are still pending')
      t.equal(await store.deleteSchedule('s2'), true, 'a failed one can be deleted')
      t.equal(await store.deleteSchedule('s4'), true, 'a claimed one too')
      t.equal(await store.finishSchedule('s4', 'three', null), false, 'then its claim ends nothing')
    })

    t.test('restart keeps versions, drafts, schedules and claims', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const first = await open(t, dataDir)
      await first.create(scope, 'posts', input('p', { title: 'v1' }, { keepVersions: 5 }))
      await first.update(scope, 'posts', input('p', { title: 'v2' }, { keepVersions: 5 }))
      const draft = await first.putDraft(scope, 'posts', 'p', { title: 'draft' })
      const pending = await first.addSchedule(schedule('s1', 'p', 10))
      await first.addSchedule(schedule('s2', 'p', 20))
      await first.addSchedule(schedule('s3', 'p', 70))
      await first.claimSchedules('one', at(10), 60_000, 1)
      await first.claimSchedules('one', at(20), 60_000, 1)
      await first.finishSchedule('s2', 'one', 'broken')
      const versions = await first.versions(scope, 'posts', 'p', 5, 0, 5)
      await first.close()

      const second = await open(t, dataDir)
      t.same(await second.versions(scope, 'posts', 'p', 5, 0, 5), versions)
      t.same((await second.version(scope, 'posts', 'p', 1, 5))?.data, { title: 'v1' })
      t.same(await second.getDraft(scope, 'posts', 'p'), draft)
      t.same(await second.getSchedule('s1'), pending)
      t.equal((await second.getSchedule('s2'))?.error, 'broken')
      t.same(await second.claimSchedules('two', at(60), 60_000, 10), [], 's1\'s claim survives the restart; s3 is not due')
      t.same((await second.claimSchedules('two', at(75), 60_000, 10)).map(s => s.id), ['s1', 's3'])
      await second.update(scope, 'posts', input('p', { title: 'v3' }, { keepVersions: 5 }))
      t.same((await second.versions(scope, 'posts', 'p', 5, 0, 5)).items.map(v => v.version), [3, 2, 1])
    })

    t.test('kill -9: every acknowledged version, draft, schedule and claim is there', async t => {
      const options: StoreOptions = { dataDir: path.join(tempDir(t), 'data') }
      // The PostgreSQL store's schema, made here so that the child and this process share it.
      if (factory.name === 'postgres') options.databaseUrl = await postgresUrl(t)
      const steps = await crashAfter(t, factory.name, options, 150)
      const store = createStore(factory.name as ContentStore['kind'], options)
      await store.open()
      t.teardown(() => store.close())
      const problems: string[] = []
      const expect = (ok: boolean, what: string): void => { if (!ok) problems.push(what) }
      for (const [slug, done] of steps) {
        if (done.has('entry')) expect(await store.get(scope, 'posts', slug) !== undefined, `${slug}: entry`)
        const versions = (await store.versions(scope, 'posts', slug, 5, 0, 5)).items.map(v => v.version)
        if (done.has('entry')) expect(versions.includes(1), `${slug}: version 1`)
        if (done.has('version')) expect(versions.includes(2), `${slug}: version 2`)
        const draft = await store.getDraft(scope, 'posts', slug)
        // A publish that landed but was not acknowledged (killed in between) took the draft with it: the entry says so.
        const publishedUnacknowledged = draft === undefined && (await store.get(scope, 'posts', slug))?.data.v === 3
        if (done.has('draft') && !done.has('published')) expect(draft?.data.draft !== undefined || publishedUnacknowledged, `${slug}: draft`)
        if (done.has('published')) expect(draft === undefined && versions.includes(3), `${slug}: published, its draft gone`)
        if (done.has('schedule')) expect(await store.getSchedule(slug) !== undefined, `${slug}: schedule`)
        if (done.has('failed')) expect((await store.getSchedule(slug))?.error === `failed ${slug}`, `${slug}: failed schedule`)
      }
      t.ok(['published', 'failed'].every(step => [...steps.values()].some(s => s.has(step))), 'the child got through every step', { steps: steps.size })
      t.same(problems, [], 'nothing acknowledged is missing')
    })

    if (factory.sharesData) {
      t.test('two stores on one database: each schedule is claimed once', async t => {
        const dataDir = path.join(tempDir(t), 'data')
        const one = await open(t, dataDir)
        const two = await open(t, dataDir)
        await one.create(scope, 'posts', input('p', { title: 'P' }))
        const ids = Array.from({ length: 12 }, (_, i) => `s${String(i).padStart(2, '0')}`)
        for (const [i, id] of ids.entries()) await (i % 2 === 0 ? one : two).addSchedule(schedule(id, 'p', i))
        const rounds = await Promise.all([
          one.claimSchedules('one', at(20), 60_000, 5), two.claimSchedules('two', at(20), 60_000, 5),
          one.claimSchedules('one', at(20), 60_000, 5), two.claimSchedules('two', at(20), 60_000, 5)
        ])
        const claimed = rounds.flat().map(s => s.id)
        t.equal(claimed.length, 12, 'every due schedule is claimed')
        t.same([...claimed].sort(), ids, 'each by one claimant only')
        const byOne = [...rounds[0] ?? [], ...rounds[2] ?? []].map(s => s.id)
        t.equal(await two.finishSchedule(byOne[0] as string, 'two', null), false, 'the other store cannot end one\'s claim')
        t.equal(await one.finishSchedule(byOne[0] as string, 'one', null), true)
        t.equal(await two.getSchedule(byOne[0] as string), undefined, 'seen by the other store')
        await two.create(scope, 'posts', input('q', { title: 'Q' }, { keepVersions: 3 }))
        t.equal((await one.versions(scope, 'posts', 'q', 3, 0, 3)).total, 1)
        await one.putDraft(scope, 'posts', 'q', { title: 'QQ' })
        t.same((await two.getDraft(scope, 'posts', 'q'))?.data, { title: 'QQ' })
      })
    }
  })
}

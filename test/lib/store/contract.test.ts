// One suite, every store (test/fixtures/stores.ts): every rule of the ContentStore interface
// (types/store.ts). What only one store has (its files, its database, its crash recovery) is
// tested in file.test.ts and sqlite.test.ts.
import { existsSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { parseListQuery } from '../../../lib/query/parse.js'
import { PostgresStore, type StoreOptions } from '../../../lib/store/index.js'
import { isEntryChanged } from '../../../lib/store/common.js'
import type { ResolvedSchema } from '../../../types/schema.js'
import type { Scope } from '../../../types/scope.js'
import type { ChangeFilter, ChangeRecord } from '../../../types/changes.js'
import type { ContentStore, EntryInput, StoredWrite } from '../../../types/store.js'
import { tempDir } from '../../helper.js'
import { allEntries, storeFactories } from '../../fixtures/stores.js'

const scope: Scope = { environment: 'default', locale: null }
const main: ChangeFilter = { environment: 'default', locale: null }
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

const schema: ResolvedSchema = {
  name: 'posts',
  fields: {
    title: { field_type: 'string', unique: true },
    views: { field_type: 'integer' },
    seo: { field_type: 'object', fields: { code: { field_type: 'string', unique: true } } }
  },
  reusable: false,
  strict: false,
  extends: null,
  default_sort: 'views',
  default_order: 'desc'
}

const input = (slug: string, data: Record<string, unknown> = {}, status: EntryInput['status'] = 'published'): EntryInput =>
  ({ slug, status, data })
/** A write whose `title` and `seo.code` are unique, as the pipeline sends them. */
const uniqueInput = (slug: string, data: Record<string, unknown> = {}): EntryInput =>
  ({ slug, status: 'published', data, unique: ['title', 'seo.code'] })

async function rejectsWith (t: Test, promise: Promise<unknown>, code: string, what: string): Promise<CmsError | undefined> {
  try {
    await promise
    t.fail(`${what}: expected ${code}`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === code, `${what}: ${code}`, { err })
    return err as CmsError
  }
}

const slugsOf = (outcomes: Array<PromiseSettledResult<unknown>>): string[] =>
  outcomes.map(o => o.status === 'fulfilled' ? (o.value as StoredWrite).entry.slug : `x:${(o.reason as CmsError).code}`)

/** Every record of the log a filter reads, page by page. */
async function readLog (store: ContentStore, filter: ChangeFilter = main): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = []
  for (let after = 0; ;) {
    const page = await store.changes.since(after, 2, filter)
    out.push(...page.records)
    after = page.upTo
    if (!page.more) return out
  }
}

/** A transaction of the test's holding a PostgreSQL store's write lock until `release`. */
function holdWriteLock (store: PostgresStore): { taken: Promise<void>, release: () => void, done: Promise<void> } {
  let release = (): void => {}
  const released = new Promise<void>(resolve => { release = resolve })
  let taken = (): void => {}
  const took = new Promise<void>(resolve => { taken = resolve })
  const done = store.transaction(async client => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended('lectern:write:' || current_schema(), 0))")
    taken()
    await released
  })
  return { taken: took, release, done }
}

for (const factory of storeFactories) {
  t.test(`store=${factory.name}`, async t => {
    const open = async (t: Test, dataDir: string, options: Partial<StoreOptions> = {}): Promise<ContentStore> => {
      const store = factory.create({ dataDir, locales: ['en', 'de'], environments: ['main', 'staging'], ...options })
      await store.open()
      t.teardown(() => store.close())
      return store
    }
    const fresh = async (t: Test): Promise<ContentStore> => await open(t, path.join(tempDir(t), 'data'))

    t.test('create, get, update, delete', async t => {
      const store = await fresh(t)
      const { entry: created } = await store.create(scope, 'posts', input('hello', { title: 'Hello', views: 3 }, 'draft'))
      t.same(created, { slug: 'hello', status: 'draft', data: { title: 'Hello', views: 3 }, createdAt: created.createdAt, updatedAt: created.createdAt })
      t.match(created.createdAt, ISO)
      t.same(await store.get(scope, 'posts', 'hello'), created, 'get returns what create returned')
      t.equal(await store.get(scope, 'posts', 'missing'), undefined)
      t.equal(await store.get(scope, 'other', 'hello'), undefined, 'collections are separate')

      await new Promise(resolve => setTimeout(resolve, 2))
      const { entry: updated } = await store.update(scope, 'posts', input('hello', { title: 'Hi' }))
      t.equal(updated.createdAt, created.createdAt, 'update keeps created_at')
      t.ok(updated.updatedAt > created.updatedAt, 'update moves updated_at')
      t.same((await store.get(scope, 'posts', 'hello'))?.data, { title: 'Hi' }, 'update replaces the data')
      t.equal((await store.get(scope, 'posts', 'hello'))?.status, 'published')

      t.type(await store.delete(scope, 'posts', 'hello'), 'number', 'a delete gives its tombstone\'s seq')
      t.equal(await store.delete(scope, 'posts', 'hello'), null, 'nothing left to delete')
      t.equal(await store.get(scope, 'posts', 'hello'), undefined)
    })

    t.test('every read answers a promise', async t => {
      const store = await fresh(t)
      const query = parseListQuery({}, schema, { seesDrafts: true })
      for (const read of [
        store.get(scope, 'posts', 'a'), store.getMany(scope, 'posts', ['a']), store.findByValue(scope, 'posts', 'title', 'A', null),
        store.list(scope, 'posts', query), store.prepareCollection(schema)
      ]) t.ok(read instanceof Promise)
      t.equal(typeof store.entries()[Symbol.asyncIterator], 'function', 'entries is an async iterable')
      t.type(store.revision(scope, 'posts'), 'number', 'revision is the synchronous exception')
    })

    t.test('conflict on create, not found on update', async t => {
      const store = await fresh(t)
      await store.create(scope, 'posts', input('a', { title: 'A' }))
      await rejectsWith(t, store.create(scope, 'posts', input('a', { title: 'B' })), 'CONFLICT', 'duplicate slug')
      t.same((await store.get(scope, 'posts', 'a'))?.data, { title: 'A' }, 'the first entry is untouched')
      await rejectsWith(t, store.update(scope, 'posts', input('nope', {})), 'NOT_FOUND', 'update of a missing entry')
      t.equal(await store.get(scope, 'posts', 'nope'), undefined)
    })

    t.test('entries are frozen and detached from the caller', async t => {
      const store = await fresh(t)
      const data = { title: 'T', nested: { list: [1, 2] }, gone: undefined }
      const { entry: created } = await store.create(scope, 'posts', input('x', data))
      data.title = 'changed'
      t.equal((await store.get(scope, 'posts', 'x'))?.data.title, 'T', 'a later change of the input does not leak in')
      t.notOk(Object.hasOwn(created.data, 'gone'), 'undefined values are dropped as JSON does')
      const got = await store.get(scope, 'posts', 'x')
      t.ok(Object.isFrozen(got) && Object.isFrozen(got?.data) && Object.isFrozen((got?.data.nested as { list: number[] }).list))
      t.throws(() => { (got?.data as Record<string, unknown>).title = 'x' }, TypeError)
    })

    t.test('scopes: environments and locales are separate', async t => {
      const store = await fresh(t)
      const en = { environment: 'main', locale: 'en' }
      const de = { environment: 'main', locale: 'de' }
      const staging = { environment: 'staging', locale: 'en' }
      await store.create(en, 'posts', uniqueInput('same', { title: 'en' }))
      await store.create(de, 'posts', uniqueInput('same', { title: 'en' }))
      await store.create(staging, 'posts', uniqueInput('same', { title: 'en' }))
      t.pass('a unique value is unique within its locale and environment')
      await store.update(de, 'posts', input('same', { title: 'de' }))
      await store.update(staging, 'posts', input('same', { title: 'staging' }))
      t.equal((await store.get(en, 'posts', 'same'))?.data.title, 'en')
      t.equal((await store.get(de, 'posts', 'same'))?.data.title, 'de')
      t.equal((await store.get(staging, 'posts', 'same'))?.data.title, 'staging')
      t.equal(await store.findByValue(de, 'posts', 'title', 'en', null), null, 'findByValue stays in its locale')
      t.equal((await store.list(en, 'posts', parseListQuery({}, schema, { seesDrafts: true }))).total, 1)
      const all = (await allEntries(store)).map(e => `${e.scope.environment}/${e.scope.locale ?? '-'}/${e.collection}/${e.entry.slug}`).sort()
      t.same(all, ['main/de/posts/same', 'main/en/posts/same', 'staging/en/posts/same'])
    })

    t.test('getMany and findByValue', async t => {
      const store = await fresh(t)
      await store.create(scope, 'posts', input('a', { title: 'A', views: 1, flag: true, seo: { code: 'x1' } }))
      await store.create(scope, 'posts', input('b', { title: 'B', views: 2, seo: { code: 'x2' } }))
      await store.create(scope, 'posts', input('c', { title: '1', views: '2' }))
      const many = await store.getMany(scope, 'posts', ['a', 'c', 'missing', 'a', '../x'])
      t.same([...many.keys()].sort(), ['a', 'c'])
      t.equal(many.get('a')?.data.title, 'A')
      t.same((await store.getMany(scope, 'posts', [])).size, 0)

      const find = async (path: string, value: unknown, exclude: string | null = null): Promise<string | null> =>
        await store.findByValue(scope, 'posts', path, value, exclude)
      t.equal(await find('title', 'B'), 'b')
      t.equal(await find('title', 'B', 'b'), null, 'the excluded slug does not count')
      t.equal(await find('seo.code', 'x1'), 'a', 'dotted paths')
      t.equal(await find('views', 2), 'b', 'numbers match numbers only')
      t.equal(await find('views', '2'), 'c', 'strings match strings only')
      t.equal(await find('title', 1), null, 'a number does not match the string "1"')
      t.equal(await find('flag', true), 'a')
      t.equal(await find('flag', 1), null)
      t.equal(await find('title', null), null, 'null is never looked up')
      t.equal(await find('seo', { code: 'x1' }), null, 'objects are never looked up')
      t.equal(await store.findByValue(scope, 'empty', 'title', 'A', null), null)
    })

    t.test('reads see committed writes only, findByValue included', async t => {
      const store = await fresh(t)
      await store.prepareCollection(schema)
      await store.create(scope, 'posts', input('old', { title: 'Old' }))
      // On PostgreSQL the writes commit on other connections while the reads run on theirs: a
      // busy machine could let a commit come first. Holding the store's write lock (the same
      // advisory lock, from a transaction of the test's) keeps them in flight until the reads are done.
      const held = store instanceof PostgresStore ? holdWriteLock(store) : null
      await held?.taken
      const pending = store.create(scope, 'posts', input('new', { title: 'Fresh' }))
      const moving = store.update(scope, 'posts', input('old', { title: 'Moved' }))
      const [creating, old, created] = await Promise.all([
        store.findByValue(scope, 'posts', 'title', 'Fresh', null), store.findByValue(scope, 'posts', 'title', 'Old', null), store.get(scope, 'posts', 'new')
      ])
      t.equal(creating, null, 'a create in flight is not seen')
      t.equal(old, 'old', 'nor is an update in flight')
      t.equal(created, undefined)
      held?.release()
      await held?.done
      await Promise.all([pending, moving])
      t.equal((await store.get(scope, 'posts', 'new'))?.data.title, 'Fresh')
      t.equal(await store.findByValue(scope, 'posts', 'title', 'Moved', null), 'old')
    })

    t.test('the unique rule is decided in the write', async t => {
      const store = await fresh(t)
      await store.prepareCollection(schema)
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, async (_, i) =>
        await store.create(scope, 'posts', uniqueInput(`dup-${i}`, { title: 'Same' }))))
      t.equal(outcomes.filter(o => o.status === 'fulfilled').length, 1, 'one of ten concurrent creates with one unique value wins')
      for (const o of outcomes) {
        if (o.status === 'rejected') {
          t.equal((o.reason as CmsError).code, 'VALIDATION_FAILED')
          t.match((o.reason as CmsError).errors, [/^title: must be unique; the entry 'dup-\d' already has this value$/])
        }
      }
      const winner = slugsOf(outcomes).find(s => !s.startsWith('x:')) as string

      await store.create(scope, 'posts', uniqueInput('other', { title: 'Other', seo: { code: 'C' } }))
      const both = await rejectsWith(t, store.create(scope, 'posts', uniqueInput('third', { title: 'Same', seo: { code: 'C' } })), 'VALIDATION_FAILED', 'two clashes')
      t.same(both?.errors, [
        `title: must be unique; the entry '${winner}' already has this value`,
        "seo.code: must be unique; the entry 'other' already has this value"
      ], 'one message per path, in the order given')
      const first = await rejectsWith(t, store.create(scope, 'posts', uniqueInput('other', { title: 'Same' })), 'VALIDATION_FAILED', 'a clash and a taken slug')
      t.match(first?.errors, [/^title: must be unique/], 'the clash is reported before the taken slug')
      await rejectsWith(t, store.create(scope, 'posts', uniqueInput('other', { title: 'Other' })), 'CONFLICT', 'the same slug and its own value: the slug')
      await rejectsWith(t, store.update(scope, 'posts', uniqueInput('nobody', { title: 'Same' })), 'NOT_FOUND', 'an update of nothing, with a taken value')
      await rejectsWith(t, store.update(scope, 'posts', uniqueInput('other', { title: 'Same' })), 'VALIDATION_FAILED', 'an update to a taken value')
      t.equal((await store.get(scope, 'posts', 'other'))?.data.title, 'Other', 'and nothing changed')
      await store.update(scope, 'posts', uniqueInput('other', { title: 'Other', views: 1 }))
      t.pass('an update keeping its own unique value is fine')
      await store.create(scope, 'posts', input('free', { title: 'Same' }))
      t.pass('a write without unique fields is not checked')
      for (const [i, value] of [null, { a: 1 }, ['Same']].entries()) await store.create(scope, 'posts', uniqueInput(`v${i}`, { title: value }))
      t.pass('only scalar values can clash')
    })

    t.test('writes in flight together: a refused one fails alone, later ones see earlier ones', async t => {
      const store = await fresh(t)
      await store.prepareCollection(schema)
      await store.create(scope, 'posts', uniqueInput('held', { title: 'Held' }))
      await store.create(scope, 'posts', uniqueInput('gone', { title: 'Freed' }))
      // Issued in one turn: the SQLite store commits them in one transaction, the file store has them all in flight.
      const outcomes = await Promise.allSettled([
        store.create(scope, 'posts', uniqueInput('a', { title: 'A' })),
        store.create(scope, 'posts', uniqueInput('b', { title: 'Held' })),
        store.create(scope, 'posts', uniqueInput('held', { title: 'Other' })),
        store.update(scope, 'posts', uniqueInput('missing', { title: 'M' })),
        store.create(scope, 'posts', uniqueInput('c', { title: 'A' })),
        store.update(scope, 'posts', uniqueInput('held', { title: 'A' })),
        store.delete(scope, 'posts', 'gone'),
        store.create(scope, 'posts', uniqueInput('d', { title: 'Freed' })),
        store.create(scope, 'posts', uniqueInput('e', { title: 'E' }))
      ])
      t.same(outcomes.map((o, i) => i === 6 ? o.status : slugsOf([o])[0]), [
        'a', 'x:VALIDATION_FAILED', 'x:CONFLICT', 'x:NOT_FOUND', 'x:VALIDATION_FAILED', 'x:VALIDATION_FAILED', 'fulfilled', 'd', 'e'
      ])
      const titles = (await allEntries(store)).map(e => `${e.entry.slug}:${String(e.entry.data.title)}`).sort()
      t.same(titles, ['a:A', 'd:Freed', 'e:E', 'held:Held'], 'exactly the accepted writes are stored')
    })

    t.test('an update with a precondition (expected) applies only to the entry as it was read', async t => {
      const store = await fresh(t)
      await store.prepareCollection(schema)
      await store.create(scope, 'posts', { ...uniqueInput('taken', { title: 'Taken' }) })
      const { entry: v1 } = await store.create(scope, 'posts', { ...uniqueInput('p', { title: 'One', views: 1 }), keepVersions: 5 })
      const { entry: v2 } = await store.update(scope, 'posts', { ...uniqueInput('p', { title: 'Two', views: 2 }), keepVersions: 5, expected: { entry: v1 } })
      t.equal(v2.data.title, 'Two', 'a fresh precondition passes')
      const seq = await store.changes.latestSeq()
      const revision = store.revision(scope, 'posts')

      const stale = async (what: string, expected: EntryInput['expected'], data: Record<string, unknown> = { title: 'Three' }): Promise<void> => {
        const err = await rejectsWith(t, store.update(scope, 'posts', { ...uniqueInput('p', data), keepVersions: 5, expected }), 'CONFLICT', what)
        t.ok(isEntryChanged(err), `${what}: told apart from a taken slug`)
        t.match(err?.message, /changed by another request while this one was applied; try again/)
      }
      await stale('changed since it was read', { entry: v1 })
      await stale('same time, other data (two writes in one millisecond)', { entry: { ...v2, data: { ...v2.data, views: 99 } } })
      await stale('same time and data, other status', { entry: { ...v2, status: 'draft' } })
      await stale('a stale precondition comes before a unique clash', { entry: v1 }, { title: 'Taken' })
      t.same(await store.get(scope, 'posts', 'p'), v2, 'a refused update writes nothing')
      t.equal(await store.changes.latestSeq(), seq, 'no change record')
      t.equal(store.revision(scope, 'posts'), revision, 'nothing became visible')
      t.equal((await store.versions(scope, 'posts', 'p', 5, 0, 5)).total, 2, 'no version')
      await rejectsWith(t, store.update(scope, 'posts', { ...uniqueInput('none', {}), expected: { entry: v1 } }), 'NOT_FOUND', 'a missing entry is still a 404')

      // Issued in one turn from one read: the first applies, the others find it changed.
      const outcomes = await Promise.allSettled(['A', 'B', 'C'].map(async title =>
        await store.update(scope, 'posts', { ...uniqueInput('p', { title }), expected: { entry: v2 } })))
      t.same(slugsOf(outcomes), ['p', 'x:CONFLICT', 'x:CONFLICT'], 'writes in flight together: one wins')
      t.equal((await store.get(scope, 'posts', 'p'))?.data.title, 'A')
    })

    t.test('a publish (clearDraft) with a precondition on the draft it read: a draft saved since refuses it and survives', async t => {
      const store = await fresh(t)
      const { entry: live } = await store.create(scope, 'posts', { ...input('p', { title: 'Live' }), keepVersions: 5 })
      const first = await store.putDraft(scope, 'posts', 'p', { title: 'Draft 1' })
      // Saved again, perhaps within the same millisecond: its data tells it apart.
      const second = await store.putDraft(scope, 'posts', 'p', { title: 'Draft 2' })
      const seq = await store.changes.latestSeq()
      const publish = (draft: typeof first): EntryInput => ({ ...input('p', draft.data), keepVersions: 5, clearDraft: true, expected: { entry: live, draft } })
      const err = await rejectsWith(t, store.update(scope, 'posts', publish(first)), 'CONFLICT', 'publishing a stale draft')
      t.ok(isEntryChanged(err))
      t.same((await store.getDraft(scope, 'posts', 'p'))?.data, { title: 'Draft 2' }, 'the newer draft survives')
      t.same(await store.get(scope, 'posts', 'p'), live, 'the entry is untouched')
      t.equal(await store.changes.latestSeq(), seq, 'no change record')
      t.equal((await store.versions(scope, 'posts', 'p', 5, 0, 5)).total, 1, 'no version')

      const { entry } = await store.update(scope, 'posts', publish(second))
      t.equal(entry.data.title, 'Draft 2', 'the draft as read is published')
      t.equal(await store.getDraft(scope, 'posts', 'p'), undefined, 'and removed')
      await rejectsWith(t, store.update(scope, 'posts', { ...input('p', { title: 'Again' }), clearDraft: true, expected: { entry, draft: second } }), 'CONFLICT', 'the draft read is gone')
      t.equal((await store.get(scope, 'posts', 'p'))?.data.title, 'Draft 2')
    })

    if (factory.sharesData) {
      t.test('two stores on one database: the write decides against the other one\'s commits', async t => {
        const dataDir = path.join(tempDir(t), 'data')
        const one = await open(t, dataDir)
        const two = await open(t, dataDir)
        await one.prepareCollection(schema)
        const outcomes = await Promise.allSettled([
          one.create(scope, 'posts', uniqueInput('x', { title: 'Shared' })),
          two.create(scope, 'posts', uniqueInput('y', { title: 'Shared' })),
          one.create(scope, 'posts', uniqueInput('z', {})),
          two.create(scope, 'posts', uniqueInput('z', {}))
        ])
        // Which store commits first is the race's (a networked store's batches meet at the
        // database); that exactly one of each pair wins, and the other is refused, is the rule.
        const [x, y, z1, z2] = slugsOf(outcomes)
        t.same([x, y].sort(), ['x:VALIDATION_FAILED', x === 'x' ? 'x' : 'y'].sort(), 'one unique value, one winner')
        t.ok((x === 'x') !== (y === 'y'), 'exactly one of the two creates with one unique value wins')
        t.same([z1, z2].sort(), ['x:CONFLICT', 'z'], 'one slug, one winner')
        const winner = x === 'x' ? 'x' : 'y'
        t.equal((await (winner === 'x' ? two : one).get(scope, 'posts', winner))?.data.title, 'Shared', 'each sees the other\'s commits')
      })
    }

    if (factory.sharesData) {
      t.test('two stores on one database: an update built on a read the other store has overwritten since is refused', async t => {
        const dataDir = path.join(tempDir(t), 'data')
        const one = await open(t, dataDir)
        const two = await open(t, dataDir)
        const { entry: read } = await one.create(scope, 'posts', input('p', { tags: ['one'] }))
        const { entry: other } = await two.update(scope, 'posts', { ...input('p', { tags: ['one', 'two'] }), expected: { entry: read } })
        await rejectsWith(t, one.update(scope, 'posts', { ...input('p', { tags: ['one', 'three'] }), expected: { entry: read } }), 'CONFLICT', 'the lost update is refused')
        t.same(await one.get(scope, 'posts', 'p'), other, 'the other store\'s write stands')
        const draft = await one.putDraft(scope, 'posts', 'p', { tags: ['d1'] })
        await two.putDraft(scope, 'posts', 'p', { tags: ['d2'] })
        await rejectsWith(t, one.update(scope, 'posts', { ...input('p', draft.data), clearDraft: true, expected: { entry: other, draft } }), 'CONFLICT', 'a draft saved by the other store')
        t.same((await two.getDraft(scope, 'posts', 'p'))?.data, { tags: ['d2'] }, 'survives')
      })
    }

    t.test('revision: a new number when a write becomes visible, the same one otherwise', async t => {
      const store = await fresh(t)
      const de: Scope = { environment: 'main', locale: 'de' }
      const seen = new Set<number>()
      const now = (label: string, s: Scope = scope, collection = 'posts'): number => {
        const r = store.revision(s, collection)
        t.type(r, 'number', label)
        return r
      }
      const next = (label: string, before: number): number => {
        const r = now(label)
        t.not(r, before, `${label}: changed`)
        t.notOk(seen.has(r), `${label}: never handed out before`)
        seen.add(r)
        return r
      }
      let r = now('before any write')
      seen.add(r)
      const others = [now('another collection', scope, 'tags'), now('another scope', de)]
      const pending = store.create(scope, 'posts', input('a', { title: 'A' }))
      t.equal(now('a write in flight, not visible'), r)
      await pending
      r = next('created', r)
      await store.get(scope, 'posts', 'a')
      await store.getMany(scope, 'posts', ['a', 'b'])
      await store.list(scope, 'posts', parseListQuery({}, schema, { seesDrafts: true }))
      await store.findByValue(scope, 'posts', 'title', 'A', null)
      t.equal(now('after reads'), r, 'reads change nothing')
      t.same([now('another collection', scope, 'tags'), now('another scope', de)], others, 'other buckets keep theirs')
      await store.update(scope, 'posts', input('a', { title: 'B' }))
      r = next('updated', r)
      await rejectsWith(t, store.create(scope, 'posts', input('a', { title: 'C' })), 'CONFLICT', 'a create of a taken slug')
      await rejectsWith(t, store.update(scope, 'posts', input('nobody', {})), 'NOT_FOUND', 'an update of nothing')
      await store.create(scope, 'posts', uniqueInput('u', { title: 'U' }))
      r = next('created another', r)
      await rejectsWith(t, store.update(scope, 'posts', uniqueInput('u', { title: 'B' })), 'VALIDATION_FAILED', 'an update to a taken value')
      t.equal(await store.delete(scope, 'posts', 'nobody'), null)
      t.equal(now('after writes that changed nothing'), r)
      await store.create(de, 'posts', input('a', { title: 'De' }))
      t.equal(now('a write to another scope'), r)
      t.not(now('that scope', de), others[1])
      await store.delete(scope, 'posts', 'a')
      r = next('deleted', r)
      await store.close()
      await store.open()
      next('reopened', r)
    })

    t.test('20 concurrent creates of one slug: one wins, 19 conflict', async t => {
      const store = await fresh(t)
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, async (_, i) => await store.create(scope, 'posts', input('race', { n: i }))))
      const won = outcomes.filter(o => o.status === 'fulfilled')
      t.equal(won.length, 1)
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')
      t.equal(lost.length, 19)
      t.ok(lost.every(o => (o.reason as CmsError).code === 'CONFLICT'))
      t.same((await store.get(scope, 'posts', 'race'))?.data, (won[0] as PromiseFulfilledResult<StoredWrite>).value.entry.data)
      t.equal((await store.list(scope, 'posts', parseListQuery({}, schema, { seesDrafts: true }))).total, 1)
    })

    t.test('concurrent writes to one entry end in the state of the last call', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const store = await open(t, dataDir)
      await store.create(scope, 'posts', input('e', { n: 0 }))
      await Promise.all(Array.from({ length: 10 }, async (_, i) => await store.update(scope, 'posts', input('e', { n: i + 1 }))))
      t.same((await store.get(scope, 'posts', 'e'))?.data, { n: 10 })
      const del = store.delete(scope, 'posts', 'e')
      const recreate = store.create(scope, 'posts', input('e', { n: 'again' }))
      t.type(await del, 'number')
      await recreate
      await store.close()
      const again = await open(t, dataDir)
      t.same((await again.get(scope, 'posts', 'e'))?.data, { n: 'again' }, 'what is stored and what is read agree')
    })

    t.test('ping: resolves while the store can answer, rejects before open and after close', async t => {
      const store = factory.create({ dataDir: path.join(tempDir(t), 'data') })
      t.teardown(() => store.close())
      await t.rejects(store.ping(), 'not open yet')
      await store.open()
      await t.resolves(store.ping())
      await store.close()
      await t.rejects(store.ping(), 'closed')
    })

    t.test('persistence across close and reopen', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const first = await open(t, dataDir)
      const { entry: a } = await first.create(scope, 'posts', input('a', { title: 'A', list: [1, 'two', { three: 3 }], 'we ird': 'ü😀' }, 'draft'))
      await first.create({ environment: 'main', locale: 'de' }, 'posts', input('b', { title: 'B' }))
      await first.create(scope, 'posts', input('gone', {}))
      await first.delete(scope, 'posts', 'gone')
      // A write issued right before close is flushed by close.
      const last = first.create(scope, 'posts', input('last', { title: 'Last' }))
      await first.close()
      await last
      const second = await open(t, dataDir)
      t.same(await second.get(scope, 'posts', 'a'), a)
      t.equal((await second.get({ environment: 'main', locale: 'de' }, 'posts', 'b'))?.data.title, 'B')
      t.equal(await second.get(scope, 'posts', 'gone'), undefined)
      t.equal((await second.get(scope, 'posts', 'last'))?.data.title, 'Last')
      t.equal((await allEntries(second)).length, 3)
    })

    t.test('entries: every stored entry, also past a page of the store\'s reading', async t => {
      const store = await fresh(t)
      for (let i = 0; i < 520; i += 130) {
        await Promise.all(Array.from({ length: 130 }, async (_, j) => await store.create(scope, 'posts', input(`e${i + j}`, { n: i + j }))))
      }
      const seen = new Set<string>()
      for await (const location of store.entries()) {
        seen.add(location.entry.slug)
        // The consumer may use the store while it walks.
        if (seen.size === 300) await store.get(scope, 'posts', 'e1')
      }
      t.equal(seen.size, 520)
    })

    t.test('lists: status, paging, default order, counts after writes', async t => {
      const store = await fresh(t)
      await store.prepareCollection(schema)
      await store.prepareCollection(schema)
      for (let i = 1; i <= 7; i++) await store.create(scope, 'posts', input(`p${i}`, { views: i }, i % 3 === 0 ? 'draft' : 'published'))
      const q = (raw: Record<string, unknown>, seesDrafts = true): ReturnType<typeof parseListQuery> => parseListQuery(raw, schema, { seesDrafts })
      const slugs = async (raw: Record<string, unknown>, seesDrafts = true): Promise<string[]> =>
        (await store.list(scope, 'posts', q(raw, seesDrafts))).items.map(e => e.slug)
      const total = async (raw: Record<string, unknown>): Promise<number> => (await store.list(scope, 'posts', q(raw))).total
      t.same(await slugs({}), ['p7', 'p6', 'p5', 'p4', 'p3', 'p2', 'p1'], 'default_sort views, default_order desc')
      t.same(await slugs({}, false), ['p7', 'p5', 'p4', 'p2', 'p1'], 'anonymous: published only')
      t.same(await slugs({ _status: 'draft' }), ['p6', 'p3'])
      t.same(await slugs({ _per_page: '2', _page: '2' }), ['p5', 'p4'])
      t.same(await store.list(scope, 'posts', q({ _per_page: '5', _page: '3' })), { items: [], total: 7 }, 'past the end')
      t.equal(await total({ 'views[gt]': '4' }), 3)
      await store.create(scope, 'posts', input('p8', { views: 8 }))
      t.equal(await total({ 'views[gt]': '4' }), 4, 'a write refreshes cached counts')
      await store.delete(scope, 'posts', 'p8')
      t.equal(await total({ 'views[gt]': '4' }), 3)
      t.same(await store.list(scope, 'empty', q({})), { items: [], total: 0 })

      // Asked again and again (kept orders and match lists, materialized ids): every page the
      // same as the first time, and a write refreshes them.
      const pages = async (): Promise<string[][]> => await Promise.all([1, 2, 3].map(async page =>
        await slugs({ 'views[gte]': '2', _sort: 'views', _per_page: '2', _page: String(page) })))
      const first = await pages()
      t.same(first, [['p2', 'p3'], ['p4', 'p5'], ['p6', 'p7']])
      for (let i = 0; i < 6; i++) t.same(await pages(), first, `asked again (${i + 1})`)
      await store.create(scope, 'posts', input('p0', { views: 3 }))
      t.same(await pages(), [['p2', 'p0'], ['p3', 'p4'], ['p5', 'p6']], 'after a write (equal views: by slug)')
      for (let i = 0; i < 3; i++) t.same(await pages(), [['p2', 'p0'], ['p3', 'p4'], ['p5', 'p6']])
    })

    t.test('path-unsafe and invalid names are rejected', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const store = await open(t, dataDir)
      for (const slug of ['../x', 'a/b', 'a\\b', '..', 'UPPER', '', 'a b', 'x'.repeat(201)]) {
        await rejectsWith(t, store.create(scope, 'posts', input(slug)), 'BAD_REQUEST', `slug ${JSON.stringify(slug).slice(0, 20)}`)
        t.equal(await store.get(scope, 'posts', slug), undefined)
      }
      for (const collection of ['../posts', 'Posts', 'a/b', '', 'x'.repeat(65), 'a.b']) {
        await rejectsWith(t, store.create(scope, collection, input('ok')), 'BAD_REQUEST', `collection ${JSON.stringify(collection).slice(0, 20)}`)
        await rejectsWith(t, store.list(scope, collection, parseListQuery({}, schema, { seesDrafts: true })), 'BAD_REQUEST', 'a list of it')
        await rejectsWith(t, store.get(scope, collection, 'ok'), 'BAD_REQUEST', 'a read of it')
      }
      for (const bad of [{ environment: '..', locale: null }, { environment: 'main', locale: '../en' }, { environment: 'a/b', locale: null }, { environment: '.hidden', locale: null }]) {
        await rejectsWith(t, store.create(bad, 'posts', input('ok')), 'BAD_REQUEST', `scope ${JSON.stringify(bad)}`)
      }
      await rejectsWith(t, store.create(scope, 'posts', { slug: 'ok', status: 'archived' as 'draft', data: {} }), 'BAD_REQUEST', 'unknown status')
      t.equal((await allEntries(store)).length, 0, 'nothing was written')
      t.notOk(existsSync(path.join(dataDir, 'posts')), 'nothing escaped the data dir')
    })

    // ---- the change log (contract §9; types/changes.ts) ------------------------------------

    t.test('change log: every write gets a seq in commit order; a key keeps its latest change; a delete leaves a tombstone', async t => {
      const store = await fresh(t)
      const de: Scope = { environment: 'main', locale: 'de' }
      t.equal(await store.changes.latestSeq(), 0, 'a new store\'s log is empty')
      const a1 = await store.create(scope, 'posts', input('a', { title: 'A' }, 'draft'))
      const b = await store.create(de, 'posts', input('b', { title: 'B' }))
      const a2 = await store.update(scope, 'posts', input('a', { title: 'A2' }))
      const c = await store.create(scope, 'pages', input('c'))
      t.ok(a1.seq >= 1 && b.seq > a1.seq && a2.seq > b.seq && c.seq > a2.seq, 'each write awaited before the next was sent has a higher seq')
      t.same(await readLog(store), [
        { seq: a2.seq, environment: 'default', locale: null, collection: 'posts', slug: 'a', op: 'upsert', status: 'published', at: a2.entry.updatedAt },
        { seq: c.seq, environment: 'default', locale: null, collection: 'pages', slug: 'c', op: 'upsert', status: 'published', at: c.entry.updatedAt }
      ], 'one record per key: its latest change, in seq order, the entry\'s status and updatedAt')
      t.same((await readLog(store, { environment: 'main', locale: 'de' })).map(r => [r.seq, r.slug]), [[b.seq, 'b']], 'each scope reads its own')
      t.same((await readLog(store, { ...main, collections: ['pages'] })).map(r => r.slug), ['c'])

      const gone = await store.delete(scope, 'posts', 'a') as number
      t.ok(gone > c.seq)
      const tombstone = (await readLog(store)).find(r => r.slug === 'a')
      t.match(tombstone, { seq: gone, op: 'delete', status: null, at: ISO }, 'a tombstone, with the time of the delete')
      t.equal(await store.changes.latestSeq(), gone)

      await rejectsWith(t, store.create(scope, 'pages', input('c')), 'CONFLICT', 'a taken slug')
      await rejectsWith(t, store.update(scope, 'posts', input('a')), 'NOT_FOUND', 'an update of nothing')
      t.equal(await store.delete(scope, 'posts', 'a'), null, 'a delete of nothing')
      await store.create(scope, 'posts', uniqueInput('u', { title: 'U' }))
      const latest = await store.changes.latestSeq()
      await rejectsWith(t, store.create(scope, 'posts', uniqueInput('v', { title: 'U' })), 'VALIDATION_FAILED', 'a taken value')
      t.equal(await store.changes.latestSeq(), latest, 'a refused write records nothing')
      t.notOk((await readLog(store)).some(r => r.slug === 'v'))
      const again = await store.create(scope, 'posts', input('a', { title: 'Again' }))
      t.match((await readLog(store)).at(-1), { seq: again.seq, slug: 'a', op: 'upsert' }, 'a re-created entry replaces its tombstone')
      t.equal(await store.changes.horizon(), 0, 'nothing compacted')
    })

    t.test('change log: writes in flight together get distinct seqs, each readable once its write resolves', async t => {
      const store = await fresh(t)
      await store.create(scope, 'posts', input('held'))
      const writes: Array<Promise<number | null>> = []
      for (let i = 0; i < 40; i++) {
        const slug = `w${i % 10}`
        const write = i < 10
          ? store.create(scope, 'posts', input(slug, { i }))
          : i < 30 ? store.update(scope, 'posts', input(slug, { i }, i % 2 === 0 ? 'draft' : 'published')) : store.delete(scope, 'posts', slug)
        writes.push((async () => {
          const result = await write
          const seq = typeof result === 'number' || result === null ? result : result.seq
          // Readable as soon as its write resolves: the log never lags behind an acknowledged write.
          if (seq !== null && await store.changes.latestSeq() < seq) t.fail(`seq ${seq} resolved before it was readable`)
          return seq
        })())
      }
      const seqs = await Promise.all(writes)
      t.equal(new Set(seqs).size, 40, 'forty writes, forty seqs')
      t.ok(seqs.every(s => s !== null && s > 1))
      // Writes to one entry commit in the order they were sent.
      for (let k = 0; k < 10; k++) {
        const own = [k, k + 10, k + 20, k + 30].map(i => seqs[i] as number)
        t.same(own, [...own].sort((x, y) => x - y), `w${k}: in the order sent`)
      }
      const records = await readLog(store)
      t.same(records.map(r => [r.slug, r.seq, r.op]), [
        ['held', 1, 'upsert'],
        ...Array.from({ length: 10 }, (_, k) => [`w${k}`, seqs[k + 30], 'delete']).sort((x, y) => (x[1] as number) - (y[1] as number))
      ], 'the latest change of each key, in seq order')
    })

    t.test('change log: paged reads', async t => {
      const store = await fresh(t)
      for (let i = 0; i < 7; i++) await store.create(scope, 'posts', input(`p${i}`))
      const first = await store.changes.since(0, 3, main)
      t.same(first.records.map(r => r.slug), ['p0', 'p1', 'p2'])
      t.ok(first.more)
      t.equal(first.upTo, first.records[2]?.seq)
      const rest = await store.changes.since(first.upTo, 10, main)
      t.same(rest.records.map(r => r.slug), ['p3', 'p4', 'p5', 'p6'])
      t.notOk(rest.more)
      t.equal(rest.upTo, await store.changes.latestSeq())
      await store.update(scope, 'posts', input('p1', {}, 'draft'))
      t.same((await store.changes.since(rest.upTo, 10, main)).records.map(r => [r.slug, r.status]), [['p1', 'draft']], 'a changed entry is met again after the position')
    })

    t.test('change log: it survives close and reopen, and seqs go on above it', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const first = await open(t, dataDir)
      await first.create(scope, 'posts', input('a'))
      await first.create({ environment: 'staging', locale: 'en' }, 'posts', input('b', {}, 'draft'))
      await first.create(scope, 'posts', input('c'))
      await first.delete(scope, 'posts', 'c')
      // Issued right before close: close waits for it, record included.
      const last = first.update(scope, 'posts', input('a', { title: 'Last' }, 'draft'))
      await first.close()
      const { seq } = await last
      const second = await open(t, dataDir)
      const records = await readLog(second)
      t.same(records.map(r => [r.slug, r.op, r.status]), [['c', 'delete', null], ['a', 'upsert', 'draft']])
      t.equal(records.at(-1)?.seq, seq)
      t.equal(await second.changes.latestSeq(), seq)
      t.same((await readLog(second, { environment: 'staging', locale: 'en' })).map(r => r.slug), ['b'])
      const next = await second.create(scope, 'posts', input('d'))
      t.equal(next.seq, seq + 1, 'the next seq follows the last one')
    })

    t.test('change log: tombstones are kept CMS_SYNC_RETENTION_DAYS, then compaction moves the horizon', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      let now = Date.parse('2025-03-01T00:00:00.000Z')
      const clock = (): Date => new Date(now)
      const store = await open(t, dataDir, { clock, syncRetentionDays: 2 })
      await store.create(scope, 'posts', input('kept'))
      await store.create(scope, 'posts', input('old'))
      const old = await store.delete(scope, 'posts', 'old') as number
      now += 86_400_000
      await store.create(scope, 'posts', input('young'))
      const young = await store.delete(scope, 'posts', 'young') as number
      now += 86_400_000 + 1
      t.same(await store.changes.compact(), { dropped: 1, horizon: old }, 'only the tombstone older than two days')
      t.same((await readLog(store)).map(r => [r.slug, r.op]), [['kept', 'upsert'], ['young', 'delete']], 'entries\' records are never dropped')
      t.equal(await store.changes.horizon(), old)
      t.equal(await store.changes.latestSeq(), young)
      await store.close()
      const reopened = await open(t, dataDir, { clock, syncRetentionDays: 2 })
      t.equal(await reopened.changes.horizon(), old, 'the horizon survives a restart')
      now += 86_400_000
      t.same(await reopened.changes.compact(), { dropped: 1, horizon: young })
      t.same(await readLog(reopened), (await readLog(reopened)).filter(r => r.op === 'upsert'))
      t.ok((await reopened.create(scope, 'posts', input('next'))).seq > young, 'a seq compaction dropped is never handed out again')
    })

    t.test('change log: a store\'s log is refused before open and after close', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const store = factory.create({ dataDir })
      const changes = store.changes
      await t.rejects(changes.since(0, 10, main), /not open/)
      await store.open()
      t.teardown(() => store.close())
      await store.create(scope, 'posts', input('a'))
      await store.close()
      for (const call of [changes.since(0, 10, main), changes.latestSeq(), changes.horizon(), changes.compact()] as Array<Promise<unknown>>) await t.rejects(call, /not open/)
      await store.open()
      t.equal(store.changes, changes, 'one object for the store\'s life')
      t.equal(await changes.latestSeq(), 1, 'usable again once reopened')
      t.same(await changes.compact(), { dropped: 0, horizon: 0 })
    })

    if (factory.sharesData) {
      t.test('change log: two stores on one database hand out seqs in commit order, never twice', async t => {
        const dataDir = path.join(tempDir(t), 'data')
        const one = await open(t, dataDir)
        const two = await open(t, dataDir)
        const seqs: number[] = []
        for (let i = 0; i < 6; i++) {
          const [x, y] = await Promise.all([one.create(scope, 'posts', input(`one-${i}`)), two.create(scope, 'posts', input(`two-${i}`))])
          seqs.push(x.seq, y.seq)
        }
        t.equal(new Set(seqs).size, 12)
        const records = await readLog(one)
        t.same(records.map(r => r.seq).sort((a, b) => a - b), [...seqs].sort((a, b) => a - b), 'each the other\'s records too')
        t.equal(await two.changes.latestSeq(), Math.max(...seqs))
      })
    }

    t.test('ensureCollection and prepareCollection', async t => {
      const store = await fresh(t)
      await store.ensureCollection('articles')
      await t.rejects(store.ensureCollection('../x'), { code: 'BAD_REQUEST' })
      await store.prepareCollection(schema)
      await store.prepareCollection({ ...schema, default_sort: 'title', fields: { title: { field_type: 'string' } } })
      await store.prepareCollection({ ...schema, name: 'Bad Name' })
      t.pass('prepareCollection is idempotent and ignores bad names')
    })
  })
}

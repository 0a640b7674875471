// One suite, both backends: every rule of the ContentStore interface (types/store.ts).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { parseListQuery } from '../../../lib/query/parse.js'
import { createStore, type StoreLogger } from '../../../lib/store/index.js'
import type { ResolvedSchema } from '../../../types/schema.js'
import type { Scope } from '../../../types/scope.js'
import type { ContentStore, EntryInput } from '../../../types/store.js'
import { STORES, tempDir, type StoreName } from '../../helper.js'

const scope: Scope = { environment: 'default', locale: null }
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

interface Logged { level: string, obj: object, msg: string }

function recorder (): { log: StoreLogger, lines: Logged[] } {
  const lines: Logged[] = []
  const at = (level: string) => (obj: object, msg: string) => { lines.push({ level, obj, msg }) }
  return { log: { info: at('info'), warn: at('warn'), error: at('error') }, lines }
}

async function open (t: Test, kind: StoreName, dataDir: string, log?: StoreLogger): Promise<ContentStore> {
  const store = createStore(kind, { dataDir, log, locales: ['en', 'de'], environments: ['main', 'staging'] })
  await store.open()
  t.teardown(() => store.close())
  return store
}

const input = (slug: string, data: Record<string, unknown> = {}, status: EntryInput['status'] = 'published'): EntryInput =>
  ({ slug, status, data })

async function rejectsWith (t: Test, promise: Promise<unknown>, code: string, what: string): Promise<void> {
  try {
    await promise
    t.fail(`${what}: expected ${code}`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === code, `${what}: ${code}`, { err })
  }
}

for (const kind of STORES) {
  t.test(`store=${kind}`, async t => {
    t.test('create, get, update, delete', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      t.equal(store.kind, kind)
      const created = await store.create(scope, 'posts', input('hello', { title: 'Hello', views: 3 }, 'draft'))
      t.same(created, { slug: 'hello', status: 'draft', data: { title: 'Hello', views: 3 }, createdAt: created.createdAt, updatedAt: created.createdAt })
      t.match(created.createdAt, ISO)
      t.same(store.get(scope, 'posts', 'hello'), created, 'get returns what create returned')
      t.equal(store.get(scope, 'posts', 'missing'), undefined)
      t.equal(store.get(scope, 'other', 'hello'), undefined, 'collections are separate')

      await new Promise(resolve => setTimeout(resolve, 2))
      const updated = await store.update(scope, 'posts', input('hello', { title: 'Hi' }))
      t.equal(updated.createdAt, created.createdAt, 'update keeps created_at')
      t.ok(updated.updatedAt > created.updatedAt, 'update moves updated_at')
      t.same(store.get(scope, 'posts', 'hello')?.data, { title: 'Hi' }, 'update replaces the data')
      t.equal(store.get(scope, 'posts', 'hello')?.status, 'published')

      t.equal(await store.delete(scope, 'posts', 'hello'), true)
      t.equal(await store.delete(scope, 'posts', 'hello'), false, 'nothing left to delete')
      t.equal(store.get(scope, 'posts', 'hello'), undefined)
    })

    t.test('conflict on create, not found on update', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      await store.create(scope, 'posts', input('a', { title: 'A' }))
      await rejectsWith(t, store.create(scope, 'posts', input('a', { title: 'B' })), 'CONFLICT', 'duplicate slug')
      t.same(store.get(scope, 'posts', 'a')?.data, { title: 'A' }, 'the first entry is untouched')
      await rejectsWith(t, store.update(scope, 'posts', input('nope', {})), 'NOT_FOUND', 'update of a missing entry')
      t.equal(store.get(scope, 'posts', 'nope'), undefined)
    })

    t.test('entries are frozen and detached from the caller', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      const data = { title: 'T', nested: { list: [1, 2] }, gone: undefined }
      const created = await store.create(scope, 'posts', input('x', data))
      data.title = 'changed'
      t.equal(store.get(scope, 'posts', 'x')?.data.title, 'T', 'a later change of the input does not leak in')
      t.notOk(Object.hasOwn(created.data, 'gone'), 'undefined values are dropped as JSON does')
      const got = store.get(scope, 'posts', 'x')
      t.ok(Object.isFrozen(got) && Object.isFrozen(got?.data) && Object.isFrozen((got?.data.nested as { list: number[] }).list))
      t.throws(() => { (got?.data as Record<string, unknown>).title = 'x' }, TypeError)
    })

    t.test('scopes: environments and locales are separate', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      const en = { environment: 'main', locale: 'en' }
      const de = { environment: 'main', locale: 'de' }
      const staging = { environment: 'staging', locale: 'en' }
      await store.create(en, 'posts', input('same', { title: 'en' }))
      await store.create(de, 'posts', input('same', { title: 'de' }))
      await store.create(staging, 'posts', input('same', { title: 'staging' }))
      t.equal(store.get(en, 'posts', 'same')?.data.title, 'en')
      t.equal(store.get(de, 'posts', 'same')?.data.title, 'de')
      t.equal(store.get(staging, 'posts', 'same')?.data.title, 'staging')
      t.equal(store.findByValue(de, 'posts', 'title', 'en', null), null, 'findByValue stays in its locale')
      t.equal(store.list(en, 'posts', parseListQuery({}, schema, { seesDrafts: true })).total, 1)
      const all = [...store.entries()].map(e => `${e.scope.environment}/${e.scope.locale ?? '-'}/${e.collection}/${e.entry.slug}`).sort()
      t.same(all, ['main/de/posts/same', 'main/en/posts/same', 'staging/en/posts/same'])
    })

    t.test('getMany and findByValue', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      await store.create(scope, 'posts', input('a', { title: 'A', views: 1, flag: true, seo: { code: 'x1' } }))
      await store.create(scope, 'posts', input('b', { title: 'B', views: 2, seo: { code: 'x2' } }))
      await store.create(scope, 'posts', input('c', { title: '1', views: '2' }))
      const many = store.getMany(scope, 'posts', ['a', 'c', 'missing', 'a', '../x'])
      t.same([...many.keys()].sort(), ['a', 'c'])
      t.equal(many.get('a')?.data.title, 'A')
      t.same(store.getMany(scope, 'posts', []).size, 0)

      t.equal(store.findByValue(scope, 'posts', 'title', 'B', null), 'b')
      t.equal(store.findByValue(scope, 'posts', 'title', 'B', 'b'), null, 'the excluded slug does not count')
      t.equal(store.findByValue(scope, 'posts', 'seo.code', 'x1', null), 'a', 'dotted paths')
      t.equal(store.findByValue(scope, 'posts', 'views', 2, null), 'b', 'numbers match numbers only')
      t.equal(store.findByValue(scope, 'posts', 'views', '2', null), 'c', 'strings match strings only')
      t.equal(store.findByValue(scope, 'posts', 'title', 1, null), null, 'a number does not match the string "1"')
      t.equal(store.findByValue(scope, 'posts', 'flag', true, null), 'a')
      t.equal(store.findByValue(scope, 'posts', 'flag', 1, null), null)
      t.equal(store.findByValue(scope, 'posts', 'title', null, null), null, 'null is never looked up')
      t.equal(store.findByValue(scope, 'posts', 'seo', { code: 'x1' }, null), null, 'objects are never looked up')
      t.equal(store.findByValue(scope, 'empty', 'title', 'A', null), null)
    })

    t.test('findByValue sees writes in flight; EntryInput.unique is checked atomically', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      store.prepareCollection(schema)
      await store.create(scope, 'posts', input('old', { title: 'Old' }))
      const pending = store.create(scope, 'posts', input('new', { title: 'Fresh' }))
      t.equal(store.findByValue(scope, 'posts', 'title', 'Fresh', null), 'new', 'the in-flight create counts')
      const moving = store.update(scope, 'posts', input('old', { title: 'Moved' }))
      t.equal(store.findByValue(scope, 'posts', 'title', 'Old', null), null, 'an in-flight update replaces the committed value')
      t.equal(store.findByValue(scope, 'posts', 'title', 'Moved', null), 'old')
      t.equal(store.get(scope, 'posts', 'new'), undefined, 'reads see committed writes only')
      await Promise.all([pending, moving])
      t.equal(store.get(scope, 'posts', 'new')?.data.title, 'Fresh')

      const writes = Array.from({ length: 10 }, (_, i) =>
        store.create(scope, 'posts', { slug: `dup-${i}`, status: 'published', data: { title: 'Same' }, unique: ['title'] }))
      const outcomes = await Promise.allSettled(writes)
      t.equal(outcomes.filter(o => o.status === 'fulfilled').length, 1, 'one of ten concurrent creates with one unique value wins')
      for (const o of outcomes) {
        if (o.status === 'rejected') {
          t.equal((o.reason as CmsError).code, 'VALIDATION_FAILED')
          t.match((o.reason as CmsError).errors?.[0], /^title: must be unique; the entry 'dup-\d' already has this value$/)
        }
      }
      await rejectsWith(t, store.update(scope, 'posts', { ...input('old', { title: 'Same' }), unique: ['title'] }), 'VALIDATION_FAILED', 'update to a taken value')
      await store.update(scope, 'posts', { ...input('old', { title: 'Moved', views: 1 }), unique: ['title'] })
      t.pass('an update keeping its own unique value is fine')
    })

    t.test('revision: a new number when a write becomes visible, the same one otherwise', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      const de: Scope = { environment: 'main', locale: 'de' }
      const seen = new Set<number>()
      const now = (label: string, s: Scope = scope, collection = 'posts'): number => {
        const r = store.revision(s, collection)
        t.type(r, 'number', label)
        return r
      }
      const fresh = (label: string, before: number): number => {
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
      r = fresh('created', r)
      store.get(scope, 'posts', 'a')
      store.getMany(scope, 'posts', ['a', 'b'])
      store.list(scope, 'posts', parseListQuery({}, schema, { seesDrafts: true }))
      store.findByValue(scope, 'posts', 'title', 'A', null)
      t.equal(now('after reads'), r, 'reads change nothing')
      t.same([now('another collection', scope, 'tags'), now('another scope', de)], others, 'other buckets keep theirs')
      await store.update(scope, 'posts', input('a', { title: 'B' }))
      r = fresh('updated', r)
      await rejectsWith(t, store.create(scope, 'posts', input('a', { title: 'C' })), 'CONFLICT', 'a create of a taken slug')
      await rejectsWith(t, store.update(scope, 'posts', input('nobody', {})), 'NOT_FOUND', 'an update of nothing')
      t.equal(await store.delete(scope, 'posts', 'nobody'), false)
      t.equal(now('after writes that changed nothing'), r)
      await store.create(de, 'posts', input('a', { title: 'De' }))
      t.equal(now('a write to another scope'), r)
      t.not(now('that scope', de), others[1])
      await store.delete(scope, 'posts', 'a')
      r = fresh('deleted', r)
      await store.close()
      await store.open()
      fresh('reopened', r)
    })

    t.test('20 concurrent creates of one slug: one wins, 19 conflict', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.create(scope, 'posts', input('race', { n: i }))))
      const won = outcomes.filter(o => o.status === 'fulfilled')
      t.equal(won.length, 1)
      const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected')
      t.equal(lost.length, 19)
      t.ok(lost.every(o => (o.reason as CmsError).code === 'CONFLICT'))
      t.same(store.get(scope, 'posts', 'race')?.data, (won[0] as PromiseFulfilledResult<{ data: unknown }>).value.data)
      t.equal(store.list(scope, 'posts', parseListQuery({}, schema, { seesDrafts: true })).total, 1)
    })

    t.test('concurrent writes to one entry end in the state of the last call', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const store = await open(t, kind, dataDir)
      await store.create(scope, 'posts', input('e', { n: 0 }))
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.update(scope, 'posts', input('e', { n: i + 1 }))))
      t.same(store.get(scope, 'posts', 'e')?.data, { n: 10 })
      const del = store.delete(scope, 'posts', 'e')
      const recreate = store.create(scope, 'posts', input('e', { n: 'again' }))
      t.equal(await del, true)
      await recreate
      await store.close()
      const again = await open(t, kind, dataDir)
      t.same(again.get(scope, 'posts', 'e')?.data, { n: 'again' }, 'disk and index agree')
    })

    t.test('persistence across close and reopen', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const first = await open(t, kind, dataDir)
      const a = await first.create(scope, 'posts', input('a', { title: 'A', list: [1, 'two', { three: 3 }], 'we ird': 'ü😀' }, 'draft'))
      await first.create({ environment: 'main', locale: 'de' }, 'posts', input('b', { title: 'B' }))
      await first.create(scope, 'posts', input('gone', {}))
      await first.delete(scope, 'posts', 'gone')
      // A write issued right before close is flushed by close.
      const last = first.create(scope, 'posts', input('last', { title: 'Last' }))
      await first.close()
      await last
      const second = await open(t, kind, dataDir)
      t.same(second.get(scope, 'posts', 'a'), a)
      t.equal(second.get({ environment: 'main', locale: 'de' }, 'posts', 'b')?.data.title, 'B')
      t.equal(second.get(scope, 'posts', 'gone'), undefined)
      t.equal(second.get(scope, 'posts', 'last')?.data.title, 'Last')
      t.equal([...second.entries()].length, 3)
    })

    t.test('lists: status, paging, default order, counts after writes', async t => {
      const store = await open(t, kind, path.join(tempDir(t), 'data'))
      store.prepareCollection(schema)
      store.prepareCollection(schema)
      for (let i = 1; i <= 7; i++) await store.create(scope, 'posts', input(`p${i}`, { views: i }, i % 3 === 0 ? 'draft' : 'published'))
      const q = (raw: Record<string, unknown>, seesDrafts = true): ReturnType<typeof parseListQuery> => parseListQuery(raw, schema, { seesDrafts })
      const slugs = (raw: Record<string, unknown>, seesDrafts = true): string[] => store.list(scope, 'posts', q(raw, seesDrafts)).items.map(e => e.slug)
      t.same(slugs({}), ['p7', 'p6', 'p5', 'p4', 'p3', 'p2', 'p1'], 'default_sort views, default_order desc')
      t.same(slugs({}, false), ['p7', 'p5', 'p4', 'p2', 'p1'], 'anonymous: published only')
      t.same(slugs({ _status: 'draft' }), ['p6', 'p3'])
      t.same(slugs({ _per_page: '2', _page: '2' }), ['p5', 'p4'])
      t.same(store.list(scope, 'posts', q({ _per_page: '5', _page: '3' })), { items: [], total: 7 }, 'past the end')
      t.equal(store.list(scope, 'posts', q({ 'views[gt]': '4' })).total, 3)
      await store.create(scope, 'posts', input('p8', { views: 8 }))
      t.equal(store.list(scope, 'posts', q({ 'views[gt]': '4' })).total, 4, 'a write refreshes cached counts')
      await store.delete(scope, 'posts', 'p8')
      t.equal(store.list(scope, 'posts', q({ 'views[gt]': '4' })).total, 3)
      t.same(store.list(scope, 'empty', q({})), { items: [], total: 0 })

      // Asked again and again (kept orders and match lists, materialized ids): every page the
      // same as the first time, and a write refreshes them.
      const pages = (): string[][] => [1, 2, 3].map(page => slugs({ 'views[gte]': '2', _sort: 'views', _per_page: '2', _page: String(page) }))
      const first = pages()
      t.same(first, [['p2', 'p3'], ['p4', 'p5'], ['p6', 'p7']])
      for (let i = 0; i < 6; i++) t.same(pages(), first, `asked again (${i + 1})`)
      await store.create(scope, 'posts', input('p0', { views: 3 }))
      t.same(pages(), [['p2', 'p0'], ['p3', 'p4'], ['p5', 'p6']], 'after a write (equal views: by slug)')
      for (let i = 0; i < 3; i++) t.same(pages(), [['p2', 'p0'], ['p3', 'p4'], ['p5', 'p6']])
    })

    t.test('path-unsafe and invalid names are rejected', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const store = await open(t, kind, dataDir)
      for (const slug of ['../x', 'a/b', 'a\\b', '..', 'UPPER', '', 'a b', 'x'.repeat(201)]) {
        await rejectsWith(t, store.create(scope, 'posts', input(slug)), 'BAD_REQUEST', `slug ${JSON.stringify(slug).slice(0, 20)}`)
        t.equal(store.get(scope, 'posts', slug), undefined)
      }
      for (const collection of ['../posts', 'Posts', 'a/b', '', 'x'.repeat(65), 'a.b']) {
        await rejectsWith(t, store.create(scope, collection, input('ok')), 'BAD_REQUEST', `collection ${JSON.stringify(collection).slice(0, 20)}`)
        t.throws(() => store.list(scope, collection, parseListQuery({}, schema, { seesDrafts: true })), { code: 'BAD_REQUEST' })
      }
      for (const bad of [{ environment: '..', locale: null }, { environment: 'main', locale: '../en' }, { environment: 'a/b', locale: null }, { environment: '.hidden', locale: null }]) {
        await rejectsWith(t, store.create(bad, 'posts', input('ok')), 'BAD_REQUEST', `scope ${JSON.stringify(bad)}`)
      }
      await rejectsWith(t, store.create(scope, 'posts', { slug: 'ok', status: 'archived' as 'draft', data: {} }), 'BAD_REQUEST', 'unknown status')
      t.equal([...store.entries()].length, 0, 'nothing was written')
      t.notOk(existsSync(path.join(dataDir, 'posts')), 'nothing escaped the data dir')
    })

    t.test('ensureCollection and prepareCollection', async t => {
      const dataDir = path.join(tempDir(t), 'data')
      const store = await open(t, kind, dataDir)
      await store.ensureCollection('articles')
      if (kind === 'file') {
        for (const env of ['main', 'staging']) {
          for (const locale of ['en', 'de']) t.ok(existsSync(path.join(dataDir, 'content', env, 'articles', locale)), `${env}/${locale}`)
        }
      }
      await t.rejects(store.ensureCollection('../x'), { code: 'BAD_REQUEST' })
      store.prepareCollection(schema)
      store.prepareCollection({ ...schema, default_sort: 'title', fields: { title: { field_type: 'string' } } })
      store.prepareCollection({ ...schema, name: 'Bad Name' })
      t.pass('prepareCollection is idempotent and ignores bad names')
    })
  })
}

t.test('file store: crash leftovers and unreadable files at open', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const dir = path.join(dataDir, 'content', 'default', 'posts', '_')
  mkdirSync(dir, { recursive: true })
  const file = (name: string, body: string): void => { writeFileSync(path.join(dir, name), body) }
  file('good.json', JSON.stringify({ status: 'draft', created_at: '2024-01-01T00:00:00+02:00', updated_at: '2024-01-02T00:00:00Z', data: { title: 'Good' } }))
  file('.good.json.123.1.tmp', '{"status": "published", "data": {"tit')
  file('torn.json', '{"status": "published", "data": {"tit')
  file('array.json', '[]')
  file('bad-data.json', JSON.stringify({ status: 'published', data: [1] }))
  file('bad-status.json', JSON.stringify({ status: 'archived', data: {} }))
  file('bad-date.json', JSON.stringify({ status: 'published', created_at: 'yesterday', updated_at: 'today', data: {} }))
  file('hand-written.json', JSON.stringify({ data: { title: 'No envelope fields' } }))
  file('Not A Slug.json', '{}')
  file('notes.txt', 'hello')
  mkdirSync(path.join(dataDir, 'content', 'default', 'Bad Collection', '_'), { recursive: true })
  const { log, lines } = recorder()
  const store = createStore('file', { dataDir, log })
  await store.open()
  t.teardown(() => store.close())

  const good = store.get({ environment: 'default', locale: null }, 'posts', 'good')
  t.same(good, { slug: 'good', status: 'draft', data: { title: 'Good' }, createdAt: '2023-12-31T22:00:00.000Z', updatedAt: '2024-01-02T00:00:00.000Z' }, 'timestamps normalized to UTC')
  const hand = store.get({ environment: 'default', locale: null }, 'posts', 'hand-written')
  t.equal(hand?.status, 'published', 'a hand-written file defaults to published')
  t.match(hand?.createdAt, ISO, 'and takes the file time')
  t.same([...store.entries()].map(e => e.entry.slug).sort(), ['good', 'hand-written'])
  t.notOk(readdirSync(dir).some(name => name.endsWith('.tmp')), 'temp files are removed')
  const skipped = lines.filter(l => l.msg === 'content file skipped').map(l => (l.obj as { file: string }).file).sort()
  t.same(skipped, [
    'default/Bad Collection', 'default/posts/_/Not A Slug.json', 'default/posts/_/array.json', 'default/posts/_/bad-data.json',
    'default/posts/_/bad-date.json', 'default/posts/_/bad-status.json', 'default/posts/_/notes.txt', 'default/posts/_/torn.json'
  ], 'each unusable file is logged by its path under content/')
  t.ok(lines.some(l => l.level === 'warn' && /temporary files/.test(l.msg)))
})

t.test('file store: file layout', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('file', { dataDir })
  await store.open()
  t.teardown(() => store.close())
  const entry = await store.create({ environment: 'default', locale: null }, 'posts', input('hello', { title: 'Hi', _slug: 'not-special' }))
  await store.create({ environment: 'default', locale: 'fr' }, 'posts', input('bonjour', { title: 'Salut' }))
  const text = readFileSync(path.join(dataDir, 'content', 'default', 'posts', '_', 'hello.json'), 'utf8')
  t.equal(text, JSON.stringify({ status: 'published', created_at: entry.createdAt, updated_at: entry.updatedAt, data: { title: 'Hi', _slug: 'not-special' } }, null, 2) + '\n', 'pretty-printed; the slug is the file name')
  t.ok(existsSync(path.join(dataDir, 'content', 'default', 'posts', 'fr', 'bonjour.json')))
  t.same(readdirSync(path.join(dataDir, 'content', 'default', 'posts', '_')), ['hello.json'], 'no temp file is left behind')
})

t.test('sqlite store: one database file in WAL mode', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('sqlite', { dataDir })
  await store.open()
  await store.create({ environment: 'default', locale: null }, 'posts', input('hello', { title: 'Hi' }))
  t.ok(existsSync(path.join(dataDir, 'lectern.db')))
  t.ok(existsSync(path.join(dataDir, 'lectern.db-wal')), 'write-ahead log')
  await store.close()
  const { default: Database } = await import('better-sqlite3')
  const db = new Database(path.join(dataDir, 'lectern.db'), { readonly: true })
  t.teardown(() => db.close())
  t.same(db.prepare('SELECT environment, collection, locale, slug, status, data FROM entries').all(), [
    { environment: 'default', collection: 'posts', locale: '', slug: 'hello', status: 'published', data: '{"title":"Hi"}' }
  ])
})

t.test('file store: a failed write leaves the index as the disk is', async t => {
  const dataDir = path.join(tempDir(t), 'data')
  const store = createStore('file', { dataDir })
  await store.open()
  t.teardown(() => store.close())
  await store.create(scope, 'posts', input('a', { n: 1 }))
  const { rmSync } = await import('node:fs')
  rmSync(path.join(dataDir, 'content', 'default', 'posts'), { recursive: true, force: true })
  await t.rejects(store.create(scope, 'posts', input('b', { n: 2 })), { code: 'ENOENT' })
  t.equal(store.get(scope, 'posts', 'b'), undefined, 'the failed create is not visible')
  t.equal(store.findByValue(scope, 'posts', 'n', 2, null), null, 'nor counted as in flight')
  await store.create(scope, 'posts', input('b', { n: 2 }))
  t.ok(existsSync(path.join(dataDir, 'content', 'default', 'posts', '_', 'b.json')), 'the folder is made again')
})

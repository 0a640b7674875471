import t, { type Test } from 'tap'
import {
  bodyObject, bodySlug, bodyStatus, dataOf, entryView, keepStoredValues, orderFields, pathSlug,
  projectFields, setOwn, valueAt, type Data
} from '../../../lib/content/entry.js'
import { CmsError } from '../../../lib/errors.js'
import type { FieldDefinition } from '../../../types/schema.js'
import type { StoredEntry } from '../../../types/store.js'

const badRequest = (t: Test, fn: () => unknown, pattern: RegExp): void => {
  try {
    fn()
    t.fail(`expected a 400 matching ${String(pattern)}`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === 'BAD_REQUEST', 'a BAD_REQUEST')
    t.match((err as Error).message, pattern)
  }
}

t.test('bodyObject accepts plain objects only', async t => {
  t.same(bodyObject({ a: 1 }), { a: 1 })
  t.same(bodyObject(Object.create(null)), {})
  for (const body of [null, undefined, [], [1], 'x', 1, true]) {
    badRequest(t, () => bodyObject(body), /JSON object/)
  }
})

t.test('dataOf drops the system fields and keeps everything else', async t => {
  const data = dataOf({ _slug: 'a', _status: 'draft', _created_at: 'x', _updated_at: 'y', title: 'T', _other: 1 })
  t.same(data, { title: 'T', _other: 1 })
  const evil = JSON.parse('{"__proto__":{"polluted":true},"title":"x"}') as Data
  const safe = dataOf(evil)
  t.equal(Object.getPrototypeOf(safe), Object.prototype)
  t.equal(({} as Data).polluted, undefined)
  t.ok(Object.hasOwn(safe, '__proto__'))
})

t.test('bodySlug: required string, valid, normalized', async t => {
  t.equal(bodySlug('Hello World'), 'hello-world')
  t.equal(bodySlug('  Crème_brûlée  '), 'creme-brulee')
  badRequest(t, () => bodySlug(undefined), /required/)
  badRequest(t, () => bodySlug(12), /must be a string/)
  badRequest(t, () => bodySlug(''), /empty/)
  badRequest(t, () => bodySlug('a/b'), /path characters/)
  badRequest(t, () => bodySlug('a\\b'), /path characters/)
  badRequest(t, () => bodySlug('a..b'), /path characters/)
  badRequest(t, () => bodySlug('$$$'), /not valid/)
  badRequest(t, () => bodySlug('a'.repeat(201)), /200/)
})

t.test('pathSlug: normalized slugs pass as they are, others are normalized or refused', async t => {
  t.equal(pathSlug('hello-world'), 'hello-world')
  t.equal(pathSlug('Hello World'), 'hello-world')
  badRequest(t, () => pathSlug('..'), /path characters/)
  badRequest(t, () => pathSlug('a/b'), /path characters/)
  badRequest(t, () => pathSlug('a\\b'), /path characters/)
  badRequest(t, () => pathSlug('%%%'), /not valid/)
})

t.test('bodyStatus', async t => {
  t.equal(bodyStatus({}, 'published'), 'published', 'absent: the fallback')
  t.equal(bodyStatus({ _status: 'draft' }, 'published'), 'draft')
  t.equal(bodyStatus({ _status: 'published' }, 'draft'), 'published')
  for (const bad of [null, 'Draft', 'archived', 1, true, ['draft']]) {
    badRequest(t, () => bodyStatus({ _status: bad }, 'published'), /draft.*published/)
  }
})

t.test('valueAt', async t => {
  const data = { a: { b: { c: 1 } }, x: 0, n: null }
  t.equal(valueAt(data, 'a.b.c'), 1)
  t.equal(valueAt(data, 'x'), 0)
  t.equal(valueAt(data, 'n'), null)
  t.equal(valueAt(data, 'a.b.d'), undefined)
  t.equal(valueAt(data, 'x.y'), undefined)
  t.equal(valueAt(data, 'toString'), undefined, 'inherited members are not values')
})

t.test('keepStoredValues', async t => {
  const stored = { uid: 'u1', meta: { id: 'm1', note: 'n' }, title: 'old' }
  const body = { title: 'new', meta: { note: 'changed' } }
  const kept = keepStoredValues(body, stored, ['uid', 'meta.id', 'missing'])
  t.same(kept, { title: 'new', meta: { note: 'changed', id: 'm1' }, uid: 'u1' })
  t.same(body, { title: 'new', meta: { note: 'changed' } }, 'the body is not modified')
  t.same(keepStoredValues({ uid: 'other' }, stored, ['uid']), { uid: 'other' }, 'a value in the body wins (the readonly check sees it)')
  t.same(keepStoredValues({ uid: null }, stored, ['uid']), { uid: null }, 'an explicit null is a value')
  t.same(keepStoredValues({ title: 'x' }, stored, ['meta.id']), { title: 'x' }, 'a dropped parent object is not recreated')
  const same = { a: 1 }
  t.equal(keepStoredValues(same, stored, ['missing']), same, 'nothing to keep: the same object')
})

t.test('orderFields puts data in schema order at every depth', async t => {
  const fields: Record<string, FieldDefinition> = {
    title: { field_type: 'string' },
    seo: { field_type: 'object', fields: { title: { field_type: 'string' }, image: { field_type: 'asset' } } },
    blocks: { field_type: 'array', items: { field_type: 'object', fields: { kind: { field_type: 'string' }, text: { field_type: 'text' } } } },
    count: { field_type: 'integer' }
  }
  const data = {
    extra: true,
    count: 2,
    blocks: [{ text: 't', kind: 'p', more: 1 }, 'odd'],
    seo: { image: 'i', title: 's', other: 0 },
    title: 'T'
  }
  const ordered = orderFields(fields, data)
  t.equal(JSON.stringify(ordered), JSON.stringify({
    title: 'T',
    seo: { title: 's', image: 'i', other: 0 },
    blocks: [{ kind: 'p', text: 't', more: 1 }, 'odd'],
    count: 2,
    extra: true
  }))
  t.equal(JSON.stringify(orderFields(fields, { count: 1, title: 'a' })), '{"title":"a","count":1}')
})

const stored: StoredEntry = {
  slug: 'hello',
  status: 'published',
  data: { title: 'Hi', seo: { title: 'S', image: 'I' }, n: 1 },
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-02T00:00:00.000Z'
}

t.test('entryView: system fields first, then data in stored order', async t => {
  const view = entryView(stored)
  t.equal(JSON.stringify(view),
    '{"_slug":"hello","_status":"published","_created_at":"2024-01-01T00:00:00.000Z","_updated_at":"2024-01-02T00:00:00.000Z","title":"Hi","seo":{"title":"S","image":"I"},"n":1}')
  const evil = { ...stored, data: JSON.parse('{"__proto__":{"x":1},"a":1}') as Data }
  const v = entryView(evil)
  t.equal(Object.getPrototypeOf(v), Object.prototype, 'a stored __proto__ key stays data')
  t.equal(JSON.stringify(v).includes('"__proto__":{"x":1}'), true)
})

t.test('projectFields', async t => {
  const view = entryView(stored)
  t.equal(projectFields(view, null), view, 'null: everything')
  t.equal(JSON.stringify(projectFields(view, ['n', 'title'])),
    '{"_slug":"hello","_status":"published","_created_at":"2024-01-01T00:00:00.000Z","_updated_at":"2024-01-02T00:00:00.000Z","title":"Hi","n":1}',
    'entry order, not request order')
  t.same(projectFields(view, ['seo.image', '_slug', 'nope']), {
    _slug: 'hello', _status: 'published', _created_at: stored.createdAt, _updated_at: stored.updatedAt, seo: { image: 'I' }
  }, 'dotted paths keep part of an object; system fields always come back')
  t.same(projectFields(view, ['seo', 'seo.image']).seo, { title: 'S', image: 'I' }, 'a whole field wins over a part of it')
  t.same(projectFields(view, ['title.x']).title, undefined, 'a path into a scalar selects nothing')
  t.same(projectFields(view, []), { _slug: 'hello', _status: 'published', _created_at: stored.createdAt, _updated_at: stored.updatedAt })
})

t.test('setOwn defines __proto__ as data', async t => {
  const o: Data = {}
  setOwn(o, '__proto__', { polluted: true })
  setOwn(o, 'a', 1)
  t.equal(Object.getPrototypeOf(o), Object.prototype)
  t.equal(({} as Data).polluted, undefined)
  t.same(Object.keys(o), ['__proto__', 'a'])
})

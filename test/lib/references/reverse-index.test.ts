import t from 'tap'
import { buildIndex, outgoingReferences } from '../../../lib/references/build.js'
import { compilePlan, type ReferencePlan } from '../../../lib/references/plan.js'
import { ReverseIndex } from '../../../lib/references/reverse-index.js'
import { Entries, entry } from './fakes.js'

const post = { collection: 'posts', slug: 'p1', locale: null }
const jane = { collection: 'authors', slug: 'jane', locale: null }

t.test('set, referrers, update and remove as a referrer', async t => {
  const index = new ReverseIndex()
  index.set(post, [
    { field: 'author', collection: 'authors', slug: 'jane' },
    { field: 'editor', collection: 'authors', slug: 'jane' },
    { field: 'author', collection: 'authors', slug: 'jane' }
  ])
  index.set({ collection: 'pages', slug: 'home', locale: null }, [{ field: 'by', collection: 'authors', slug: 'jane' }])
  t.same(index.referrers('authors', 'jane'), [
    { collection: 'pages', slug: 'home', field: 'by', locale: null },
    { collection: 'posts', slug: 'p1', field: 'author', locale: null },
    { collection: 'posts', slug: 'p1', field: 'editor', locale: null }
  ], 'one record per (referrer, field), sorted')
  t.same(index.referrers('authors', 'joe'), [])

  // An update rebuilds the entry's records.
  index.set(post, [{ field: 'author', collection: 'authors', slug: 'joe' }])
  t.same(index.referrers('authors', 'jane').map(r => r.slug), ['home'])
  t.same(index.referrers('authors', 'joe'), [{ collection: 'posts', slug: 'p1', field: 'author', locale: null }])
  index.set(post, [])
  t.same(index.referrers('authors', 'joe'), [], 'an update without references removes its records')
  t.equal(index.size, 1)
})

t.test('locales: one target slug, records per locale', async t => {
  const index = new ReverseIndex()
  index.set({ collection: 'posts', slug: 'p1', locale: 'en' }, [{ field: 'author', collection: 'authors', slug: 'jane' }])
  index.set({ collection: 'posts', slug: 'p1', locale: 'de' }, [{ field: 'author', collection: 'authors', slug: 'jane' }])
  t.same(index.referrers('authors', 'jane').map(r => r.locale), ['de', 'en'])
  index.remove({ collection: 'authors', slug: 'jane', locale: 'de' })
  t.same(index.referrers('authors', 'jane').map(r => r.locale), ['en'], 'deleting the de entry leaves en alone')
})

t.test('delete: removed as a referrer and as a referenced entry; a new entry with that slug is referenced again', async t => {
  const index = new ReverseIndex()
  index.set(post, [{ field: 'author', collection: 'authors', slug: 'jane' }])
  index.set(jane, [{ field: 'best', collection: 'posts', slug: 'p1' }])
  index.remove(jane)
  t.same(index.referrers('authors', 'jane'), [], 'removed as referenced')
  t.same(index.referrers('posts', 'p1'), [], 'removed as referrer')
  index.restore(jane)
  t.same(index.referrers('authors', 'jane').map(r => r.slug), ['p1'], 're-created: p1 still names it')
  index.remove(jane)
  index.set(post, [])
  index.restore(jane)
  t.same(index.referrers('authors', 'jane'), [], 'nothing kept once the referrer dropped it')
})

t.test('saved form round trip, and malformed input is refused', async t => {
  const index = new ReverseIndex()
  index.set(post, [{ field: 'author', collection: 'authors', slug: 'jane' }, { field: 'tags', collection: 'tags', slug: 'a' }])
  index.set({ collection: 'posts', slug: 'p2', locale: 'en' }, [{ field: 'author', collection: 'authors', slug: 'gone' }])
  index.remove({ collection: 'authors', slug: 'gone', locale: 'en' })
  const copy = ReverseIndex.fromJSON(JSON.parse(JSON.stringify(index.toJSON())))
  t.ok(copy.equals(index))
  t.same(copy.referrers('authors', 'gone'), [], 'deleted targets stay deleted')
  t.same(copy.referencesOf(post), index.referencesOf(post))
  for (const bad of [null, 1, {}, { format: 'x', version: 1, referrers: [], deleted: [] },
    { format: 'lectern-references', version: 2, referrers: [], deleted: [] },
    { format: 'lectern-references', version: 1, referrers: [['a']], deleted: [] },
    { format: 'lectern-references', version: 1, referrers: [['a', 'b', null, [['f', 'c']]]], deleted: [] },
    { format: 'lectern-references', version: 1, referrers: [['a', 'b', 5, []]], deleted: [] },
    { format: 'lectern-references', version: 1, referrers: [], deleted: [['a']] },
    { format: 'lectern-references', version: 1, referrers: [] }]) {
    t.throws(() => ReverseIndex.fromJSON(bad), JSON.stringify(bad))
  }
})

t.test('removeCollection drops what a collection references', async t => {
  const index = new ReverseIndex()
  index.set(post, [{ field: 'author', collection: 'authors', slug: 'jane' }])
  index.set({ collection: 'pages', slug: 'x', locale: null }, [{ field: 'by', collection: 'authors', slug: 'jane' }])
  index.removeCollection('posts')
  t.same(index.referrers('authors', 'jane').map(r => r.collection), ['pages'])
})

const plans = new Map<string, ReferencePlan>([
  ['posts', compilePlan({ author: { field_type: 'reference', collection: 'authors' }, tags: { field_type: 'reference', collection: 'tags', multiple: true } })],
  ['authors', compilePlan({ name: { field_type: 'string' } })]
])

t.test('buildIndex from stored entries equals the incremental index', async t => {
  const entries = new Entries()
    .put('authors', entry('jane', {}))
    .put('tags', entry('a', {}))
    .put('posts', entry('p1', { author: 'jane', tags: ['a', 'gone'] }))
    .put('posts', entry('p2', { author: 'jane' }), { environment: 'default', locale: 'en' })
    .put('posts', entry('p3', { author: 'jane' }), { environment: 'staging', locale: null })
    .put('unknown', entry('u', { author: 'jane' }))
  const built = await buildIndex(entries.entries(), c => plans.get(c) ?? null, 'default')
  t.same(built.referrers('authors', 'jane'), [
    { collection: 'posts', slug: 'p1', field: 'author', locale: null }
  ], 'only the default environment; p2 (en) names a jane that does not exist in en')
  t.same(built.referencesOf({ collection: 'posts', slug: 'p2', locale: 'en' }), [{ field: 'author', collection: 'authors', slug: 'jane' }],
    'kept in the forward list, so it counts once jane exists in en')
  t.same(built.referrers('tags', 'gone'), [], 'a target that does not exist does not count')

  const incremental = new ReverseIndex()
  incremental.set({ collection: 'posts', slug: 'p1', locale: null }, outgoingReferences(plans.get('posts') as ReferencePlan, { author: 'jane', tags: ['a', 'gone'] }))
  incremental.set({ collection: 'posts', slug: 'p2', locale: 'en' }, [{ field: 'author', collection: 'authors', slug: 'jane' }])
  incremental.removeReferenced({ collection: 'tags', slug: 'gone', locale: null })
  incremental.removeReferenced({ collection: 'authors', slug: 'jane', locale: 'en' })
  t.ok(built.equals(incremental))
})

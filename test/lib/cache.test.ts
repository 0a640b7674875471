import t from 'tap'
import { ResponseCache, collectionTag, entryKey, listKey } from '../../lib/cache.js'

const body = (text: string): { body: Buffer, etag: string } => ({ body: Buffer.from(text), etag: `"${text}"` })
const scope = { environment: 'default', locale: null }

t.test('keys separate what must be separate', async t => {
  const en = { environment: 'default', locale: 'en' }
  const staging = { environment: 'staging', locale: null }
  const keys = new Set([
    listKey(scope, 'posts', '', false),
    listKey(scope, 'posts', '', true),
    listKey(en, 'posts', '', false),
    listKey(staging, 'posts', '', false),
    listKey(scope, 'pages', '', false),
    listKey(scope, 'posts', '_page=2', false),
    entryKey(scope, 'posts', 'a', null, false),
    entryKey(scope, 'posts', 'a', '1', false),
    entryKey(scope, 'posts', 'a', '1', true),
    entryKey(scope, 'posts', 'a', '2', false),
    entryKey(en, 'posts', 'a', null, false),
    entryKey(staging, 'posts', 'a', null, false),
    entryKey(scope, 'posts', 'b', null, false)
  ])
  t.equal(keys.size, 13)
  t.equal(entryKey(scope, 'posts', 'a', null, false), entryKey(scope, 'posts', 'a', null, true),
    'a published entry without _resolve reads the same for everyone')
})

t.test('get, set, hits and misses', async t => {
  const cache = new ResponseCache({ max: 10 })
  t.ok(cache.enabled)
  t.equal(cache.get('k'), undefined)
  cache.set('k', body('x'), [collectionTag('default', 'posts')])
  t.same(cache.get('k')?.body.toString(), 'x')
  t.same(cache.stats, { hits: 1, misses: 1, stores: 1, discarded: 0 })
})

t.test('a write discards the responses that depend on its collection, and only those', async t => {
  const cache = new ResponseCache({ max: 10 })
  const posts = collectionTag('default', 'posts')
  const authors = collectionTag('default', 'authors')
  cache.set('posts-list', body('1'), [posts])
  cache.set('posts-resolved', body('2'), [posts, authors])
  cache.set('authors-list', body('3'), [authors])
  cache.set('staging-posts', body('4'), [collectionTag('staging', 'posts')])
  t.equal(cache.invalidate(authors), 2)
  t.equal(cache.get('posts-resolved'), undefined, 'a response that embedded authors goes too')
  t.equal(cache.get('authors-list'), undefined)
  t.ok(cache.get('posts-list'))
  t.ok(cache.get('staging-posts'), 'another environment is untouched')
  t.equal(cache.invalidate(authors), 0)
  t.equal(cache.invalidate(posts), 1)
  t.equal(cache.size, 1)
  cache.clear()
  t.equal(cache.size, 0)
})

t.test('eviction and overwrite keep the tag map in step', async t => {
  const cache = new ResponseCache({ max: 2 })
  const tag = collectionTag('default', 'posts')
  cache.set('a', body('a'), [tag])
  cache.set('b', body('b'), [tag])
  cache.set('c', body('c'), [collectionTag('default', 'other')])
  t.equal(cache.get('a'), undefined, 'the least recently used went')
  cache.set('b', body('b2'), [collectionTag('default', 'other')])
  t.equal(cache.invalidate(tag), 0, 'b no longer depends on posts after its overwrite')
  t.equal(cache.get('b')?.body.toString(), 'b2')
})

t.test('a byte budget: one response may take an eighth of it', async t => {
  const cache = new ResponseCache({ max: 100, maxBytes: 8 * 1024 })
  cache.set('big', body('x'.repeat(2000)), ['t'])
  t.equal(cache.get('big'), undefined, 'too large for the budget: not kept')
  t.equal(cache.stats.stores, 0)
  for (let i = 0; i < 20; i++) cache.set(`k${i}`, body('y'.repeat(500)), ['t'])
  t.ok(cache.size < 20, `bytes bound the count (${cache.size} kept)`)
  const kept = cache.size
  t.equal(cache.invalidate('t'), kept, 'evicted ones left the tag map; the rest are discarded')
  t.equal(cache.size, 0)
})

t.test('max 0 turns the cache off', async t => {
  const cache = new ResponseCache({ max: 0 })
  t.notOk(cache.enabled)
  cache.set('k', body('x'), ['t'])
  t.equal(cache.get('k'), undefined)
  t.equal(cache.invalidate('t'), 0)
  t.same(cache.stats, { hits: 0, misses: 0, stores: 0, discarded: 0 })
})

t.test('a response read before a discard of what it depends on is not kept', async t => {
  const cache = new ResponseCache({ max: 100 })
  const posts = collectionTag('default', 'posts')
  const tags = collectionTag('default', 'tags')
  const before = cache.mark()
  cache.invalidate(posts)
  cache.set('list', body('stale'), [posts], before)
  t.equal(cache.get('list'), undefined, 'its collection was discarded after the mark: not kept')
  cache.set('other', body('fine'), [tags], before)
  t.equal(cache.get('other')?.body.toString(), 'fine', 'a discard of another collection does not matter')
  const after = cache.mark()
  cache.set('list', body('fresh'), [posts], after)
  t.equal(cache.get('list')?.body.toString(), 'fresh', 'marked after the discard: kept')
  cache.clear()
  cache.set('other', body('stale'), [tags], after)
  t.equal(cache.get('other'), undefined, 'a clear after the mark discards everything read before it')
  cache.set('other', body('now'), [tags])
  t.equal(cache.get('other')?.body.toString(), 'now', 'without a mark: as of now')
})

import t from 'tap'
import { EntryCache, bucketText } from '../../../lib/store/entry-cache.js'
import { frozenEntry } from '../../../lib/store/common.js'

const AT = '2025-01-01T00:00:00.000Z'
const entry = (slug: string) => frozenEntry(slug, 'published', { title: slug }, AT, AT)

t.test('found by bucket and slug; buckets are apart', async t => {
  const cache = new EntryCache(10, 1000)
  const posts = bucketText('default', 'posts', '')
  const pages = bucketText('default', 'pages', '')
  const a = entry('a')
  cache.set(posts, 'a', a, 10)
  t.equal(cache.get(posts, 'a'), a)
  t.equal(cache.get(pages, 'a'), undefined)
  t.equal(cache.get(bucketText('staging', 'posts', ''), 'a'), undefined)
  t.strictSame([cache.size, cache.bytes], [1, 10])
  cache.set(posts, 'a', entry('a'), 20)
  t.strictSame([cache.size, cache.bytes], [1, 20], 'replaced, counted anew')
  t.not(cache.get(posts, 'a'), a)
  cache.delete(posts, 'a')
  cache.delete(posts, 'never')
  t.strictSame([cache.get(posts, 'a'), cache.size, cache.bytes], [undefined, 0, 0])
})

t.test('bounded in entries and bytes; what leaves is not found by slug either', async t => {
  const cache = new EntryCache(2, 100)
  const b = bucketText('default', 'posts', 'en')
  cache.set(b, 'a', entry('a'), 40)
  cache.set(b, 'b', entry('b'), 40)
  cache.get(b, 'a')
  cache.set(b, 'c', entry('c'), 40)
  t.strictSame(['a', 'b', 'c'].map(s => cache.get(b, s) !== undefined), [true, false, true], 'the least recently used left')
  cache.set(b, 'd', entry('d'), 90)
  t.strictSame(['a', 'c', 'd'].map(s => cache.get(b, s) !== undefined), [false, false, true], 'bytes bound')
  cache.set(b, 'big', entry('big'), 101)
  t.equal(cache.get(b, 'big'), undefined, 'larger than the whole bound: not held')
  cache.set(b, 'd', entry('d'), 101)
  t.equal(cache.get(b, 'd'), undefined, 'replaced by one too large: gone')
  cache.set(b, 'e', entry('e'), 10)
  cache.clear()
  t.strictSame([cache.get(b, 'e'), cache.size], [undefined, 0])
})

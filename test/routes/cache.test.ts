// The response cache through the API (interface.md list rule 3, single-entry rule 4,
// visibility rule 4; CMS_CACHE_MAX) and list ETags (contract §4).
import type { ServerResponse } from 'node:http'
import t from 'tap'
import { BodyPool, type PooledBody } from '../../lib/content/body-pool.js'
import { etagOf } from '../../lib/etag.js'
import { EntryList } from '../../routes/api/content/_collection/schemas.js'
import { ADMIN_KEY, KEYS_ENV, assertShape, auth, eachStore } from '../helper.js'
import { seed, setup, type Body, type Client } from '../lib/references/app-fixture.js'

/** Counts the store reads that a cache hit must avoid. */
function spyStore (c: Client): { list: number, get: number, getMany: number } {
  const counts = { list: 0, get: 0, getMany: 0 }
  const store = c.app.store
  const list = store.list.bind(store)
  const get = store.get.bind(store)
  const getMany = store.getMany.bind(store)
  store.list = (...args) => { counts.list++; return list(...args) }
  store.get = (...args) => { counts.get++; return get(...args) }
  store.getMany = (...args) => { counts.getMany++; return getMany(...args) }
  return counts
}

const anonymous = { authorization: '' }

eachStore(t, async (t, _store, env) => {
  t.test('a repeated list or entry read is a hit: same bytes and ETag, no store read', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const counts = spyStore(c)
    for (const url of ['/api/content/posts?_sort=title', '/api/content/posts/hello', '/api/content/posts/hello?_resolve=1', '/api/content/posts?_resolve=2']) {
      const first = await c.get(url)
      t.equal(first.statusCode, 200)
      const before = { ...counts }
      const second = await c.get(url)
      t.equal(second.body, first.body, `${url}: the same bytes`)
      t.equal(second.headers.etag, first.headers.etag)
      t.equal(second.headers.etag, etagOf(second.body))
      t.equal(second.headers['content-type'], 'application/json; charset=utf-8')
      t.same(counts, before, `${url}: served without touching the store`)
    }
    const list = await c.get('/api/content/posts?_sort=title')
    assertShape(t, EntryList, list.json())
    t.ok(c.app.responseCache.stats.hits >= 5)

    // Keyed on the query string as sent (like an HTTP cache on the URL): the same parameters
    // in another order are another key, with the same answer.
    const before = { ...counts }
    const a = await c.get('/api/content/posts?_per_page=5&_sort=title')
    const b = await c.get('/api/content/posts?_sort=title&_per_page=5')
    await c.get('/api/content/posts?_per_page=5&_sort=title')
    t.equal(counts.list, before.list + 2, 'two query strings, two reads; the repeat is a hit')
    t.equal(b.body, a.body)
    t.equal(b.headers.etag, a.headers.etag)
  })

  t.test('a write discards the collection\'s responses, and the _resolve answers that embedded it', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const resolved = '/api/content/posts/hello?_resolve=1'
    t.equal(((await c.get(resolved)).json().author as Body).name, 'Jane')
    const list = (await c.get('/api/content/authors')).json()
    t.equal(list.total, 2)
    const entry = (await c.get('/api/content/authors/jane')).json()
    t.equal(entry.name, 'Jane')

    t.equal((await c.put('authors/jane', { name: 'Jane Doe', avatar: '/api/assets/jane.png' })).statusCode, 200)
    t.equal(((await c.get(resolved)).json().author as Body).name, 'Jane Doe', 'the resolved post shows the new author')
    t.equal((await c.get('/api/content/authors/jane')).json().name, 'Jane Doe')
    await c.create(t, 'authors', { _slug: 'ann', name: 'Ann' })
    t.equal((await c.get('/api/content/authors')).json().total, 3, 'a create discards the lists')
    t.equal((await c.del('authors/ann')).statusCode, 204)
    t.equal((await c.get('/api/content/authors')).json().total, 2, 'a delete too')

    // A target created after a miss: the cached null goes with the write to its collection.
    await c.create(t, 'posts', { _slug: 'lonely', title: 'L', related: ['hello'] })
    t.equal((await c.del('posts/hello')).statusCode, 204)
    t.same((await c.get('/api/content/posts/lonely?_resolve=1')).json().related, [])
    await c.create(t, 'posts', { _slug: 'hello', title: 'Back' })
    t.equal(((await c.get('/api/content/posts/lonely?_resolve=1')).json().related as Body[])[0]?.title, 'Back')
  })

  t.test('drafts are never served from the cache to a caller without a key', async t => {
    const c = await setup(t, { ...env, ...KEYS_ENV }, {}, auth(ADMIN_KEY))
    await seed(t, c)
    await c.create(t, 'posts', { _slug: 'secret', title: 'Secret', _status: 'draft', author: 'jane' })

    t.equal((await c.get('/api/content/posts/secret')).statusCode, 200, 'the admin reads the draft')
    t.equal((await c.get('/api/content/posts/secret')).statusCode, 200)
    t.equal((await c.get('/api/content/posts/secret', anonymous)).statusCode, 404, 'not from the cache')

    const adminList = (await c.get('/api/content/posts')).json()
    t.equal(adminList.total, 2)
    const publicList = (await c.get('/api/content/posts', anonymous)).json()
    t.same((publicList.items as Body[]).map(p => p._slug), ['hello'], 'the list of another visibility')

    // A published entry, cached, then turned into a draft.
    t.equal((await c.get('/api/content/posts/hello', anonymous)).statusCode, 200)
    t.equal((await c.put('posts/hello', { title: 'Hello', _status: 'draft' })).statusCode, 200)
    t.equal((await c.get('/api/content/posts/hello', anonymous)).statusCode, 404)

    // A published entry that embeds a draft: resolved per visibility.
    t.equal((await c.put('posts/hello', { title: 'Hello', author: 'jane', _status: 'published' })).statusCode, 200)
    t.equal((await c.put('authors/jane', { name: 'Jane', _status: 'draft' })).statusCode, 200)
    t.equal(((await c.get('/api/content/posts/hello?_resolve=1')).json().author as Body)._status, 'draft')
    t.equal((await c.get('/api/content/posts/hello?_resolve=1', anonymous)).json().author, null, 'the draft author is hidden')
  })

  t.test('list ETag and If-None-Match: 304 until the list changes', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const res = await c.get('/api/content/tags')
    const etag = res.headers.etag as string
    t.match(etag, /^"[0-9a-f]{16}"$/)
    t.equal(etag, etagOf(res.body))
    for (const header of [etag, etag.slice(1, -1), `W/${etag}`]) {
      const hit = await c.get('/api/content/tags', { 'if-none-match': header })
      t.equal(hit.statusCode, 304, `304 for ${header}`)
      t.equal(hit.body, '')
      t.equal(hit.headers.etag, etag)
    }
    await c.create(t, 'tags', { _slug: 'more', label: 'More' })
    const changed = await c.get('/api/content/tags', { 'if-none-match': etag })
    t.equal(changed.statusCode, 200, 'a changed list: 200 with the new body')
    t.not(changed.headers.etag, etag)
  })

  t.test('environments and locales are cached apart', async t => {
    const c = await setup(t, { ...env, CMS_ENVIRONMENTS: 'main,staging', CMS_LOCALES: 'en,de' })
    await c.create(t, 'tags', { _slug: 'a', label: 'main en' })
    await c.create(t, 'tags', { _slug: 'a', label: 'main de' }, undefined, '?_locale=de')
    await c.create(t, 'tags', { _slug: 'a', label: 'staging en' }, undefined, '?_environment=staging')
    const read = async (q: string): Promise<string> => (await c.get(`/api/content/tags/a${q}`)).json().label
    for (let i = 0; i < 2; i++) {
      t.equal(await read(''), 'main en')
      t.equal(await read('?_locale=de'), 'main de')
      t.equal(await read('?_environment=staging'), 'staging en')
    }
    t.equal((await c.put('tags/a?_environment=staging', { label: 'staging 2' })).statusCode, 200)
    t.equal(await read('?_environment=staging'), 'staging 2')
    t.equal(await read(''), 'main en')
  })

  t.test('hits are served before validation, and never in place of an answer validation would refuse', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const list = '/api/content/posts?_sort=title&_per_page=5'
    const first = await c.get(list)
    const entry = await c.get('/api/content/posts/hello')
    const stats = { ...c.app.responseCache.stats }
    t.equal((await c.get(list)).body, first.body)
    t.equal((await c.get('/api/content/posts/hello')).body, entry.body)
    t.equal(c.app.responseCache.stats.hits, stats.hits + 2, 'each hit counted once')
    t.equal(c.app.responseCache.stats.misses, stats.misses, 'and no miss besides')

    // Scope parameters given twice are a 400, though the key holds only their effective values.
    for (const url of [`${list}&_locale=a&_locale=b`, `${list}&_environment=a&_environment=b`, '/api/content/posts/hello?_locale=a&_locale=b']) {
      t.equal((await c.get(url)).statusCode, 400, url)
    }
    t.equal((await c.get(`${list}&_page=0`)).statusCode, 400, 'another query is another key')
    t.equal((await c.get('/api/content/nope?_sort=title&_per_page=5')).statusCode, 404)
    // A slug in another form is normalized on the full path, then served like the cached one.
    const upper = await c.get('/api/content/posts/Hello')
    t.equal(upper.statusCode, 200)
    t.equal(upper.body, entry.body)
    const head = await c.app.inject({ method: 'HEAD', url: '/api/content/posts/hello' })
    t.equal(head.statusCode, 200)
    t.equal(head.body, '', 'HEAD: no body')
    t.equal(head.headers.etag, entry.headers.etag)
    t.equal((await c.get(list, { 'if-none-match': first.headers.etag as string })).statusCode, 304, 'a hit honours If-None-Match')
  })

  t.test('a schema change discards everything', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    t.equal((await c.get('/api/content/tags/news')).json().label, 'News')
    const res = await c.app.inject({ method: 'DELETE', url: '/api/schemas/tags' })
    t.equal(res.statusCode, 204)
    t.equal((await c.get('/api/content/tags/news')).statusCode, 404, 'not served from the cache once the collection is gone')
  })

  t.test('CMS_CACHE_MAX=0 turns the cache off', async t => {
    const c = await setup(t, { ...env, CMS_CACHE_MAX: '0' })
    await seed(t, c)
    t.notOk(c.app.responseCache.enabled)
    const counts = spyStore(c)
    for (let i = 0; i < 3; i++) {
      t.equal((await c.get('/api/content/posts')).statusCode, 200)
      t.equal((await c.get('/api/content/posts/hello')).statusCode, 200)
    }
    t.equal(counts.list, 3, 'every list read reaches the store')
    t.equal(counts.get, 3)
    t.same(c.app.responseCache.stats, { hits: 0, misses: 0, stores: 0, discarded: 0 })
    const res = await c.get('/api/content/posts')
    t.equal(res.headers.etag, etagOf(res.body), 'lists still carry an ETag')
    t.equal((await c.get('/api/content/posts', { 'if-none-match': res.headers.etag as string })).statusCode, 304)
  })

  t.test('with the cache off, a large body lives in reused memory, released once the socket has it', async t => {
    const c = await setup(t, { ...env, CMS_CACHE_MAX: '0' })
    // About 5 KB an entry, with two-, three- and four-byte characters: a page of 12 is over 32K characters.
    for (let i = 0; i < 12; i++) {
      await c.create(t, 'tags', { _slug: `tag-${String(i).padStart(2, '0')}`, label: `${i} ${'é€😀'.repeat(300)} ${String(i % 10).repeat(4000)}` })
    }
    await c.app.listen({ port: 0, host: '127.0.0.1' })
    const address = c.app.server.address()
    const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
    const urls = ['/api/content/tags?_per_page=12', '/api/content/tags?_per_page=12&_sort=-_slug', '/api/content/tags?_per_page=10&_page=1']
    const expected = new Map<string, string>()
    for (const url of urls) expected.set(url, (await c.get(url)).body)
    // Each release records whether its response had finished (its bytes handed to the socket).
    const finishedAtRelease: boolean[] = []
    let current: ServerResponse | undefined
    c.app.server.prependListener('request', (_req: unknown, res: ServerResponse) => { current = res })
    const { encode, alloc } = BodyPool.prototype
    t.teardown(() => { Object.assign(BodyPool.prototype, { encode, alloc }) })
    const watched = (body: PooledBody | null): PooledBody | null => {
      if (body === null) return null
      const res = current
      return { bytes: body.bytes, release: () => { finishedAtRelease.push(res?.writableFinished === true); body.release() } }
    }
    BodyPool.prototype.encode = function (this: BodyPool, text: string) { return watched(encode.call(this, text)) }
    BodyPool.prototype.alloc = function (this: BodyPool, bytes: number) { return watched(alloc.call(this, bytes)) }
    for (let round = 0; round < 2; round++) {
      for (const url of urls) {
        const res = await fetch(base + url)
        const bytes = Buffer.from(await res.arrayBuffer())
        t.equal(bytes.toString(), expected.get(url), `${url}: the bytes of the page`)
        t.equal(res.headers.get('etag'), etagOf(bytes), 'with their ETag')
      }
    }
    await new Promise(resolve => setImmediate(resolve))
    t.ok(finishedAtRelease.length >= urls.length * 2, 'the pages were pooled')
    t.notOk(finishedAtRelease.includes(false), 'and each was released only after its response finished')
  })
})

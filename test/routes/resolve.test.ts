// `_resolve` on single entries and lists (contract §4), and asset URL expansion on read
// (interface.md "Asset URLs inside entries", list rule 4, contract §7).
import t, { type Test } from 'tap'
import { etagOf } from '../../lib/etag.js'
import { Entry, EntryList } from '../../routes/api/content/_collection/schemas.js'
import { ADMIN_KEY, KEYS_ENV, assertError, assertShape, auth, eachStore } from '../helper.js'
import { PUBLIC_URL, seed, setup, type Body, type Client } from '../lib/references/app-fixture.js'

const SYSTEM = ['_slug', '_status', '_created_at', '_updated_at']

async function getJson (t: Test, c: Client, url: string, headers?: Record<string, string>): Promise<Body> {
  const res = await c.get(url, headers)
  t.equal(res.statusCode, 200, `GET ${url}`, { body: res.body })
  return res.json()
}

/** Counts batched reads of the store (no query per reference). */
function spyGetMany (c: Client): string[] {
  const calls: string[] = []
  const store = c.app.store
  const original = store.getMany.bind(store)
  store.getMany = (scope, collection, slugs) => {
    calls.push(`${collection}:${[...slugs].sort().join(',')}`)
    return original(scope, collection, slugs)
  }
  return calls
}

eachStore(t, async (t, store, env) => {
  t.test('_resolve=1 on an entry: references become entries with their system fields; asset paths absolute', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const plain = await getJson(t, c, '/api/content/posts/hello')
    t.equal(plain.author, 'jane', 'without _resolve: slugs')
    t.equal(plain.cover, '/api/assets/cover.png', 'without _resolve: relative asset paths')

    const res = await c.get('/api/content/posts/hello?_resolve=1')
    t.equal(res.statusCode, 200)
    const body = res.json()
    assertShape(t, Entry, body)
    t.equal(res.headers.etag, etagOf(res.body), 'the ETag is the hash of the resolved body')
    const author = body.author as Body
    assertShape(t, Entry, author, 'a resolved entry has the entry shape')
    t.same(Object.keys(author).slice(0, 4), SYSTEM, 'system fields first')
    t.match(author, { _slug: 'jane', _status: 'published', name: 'Jane', avatar: `${PUBLIC_URL}/api/assets/jane.png` })
    t.same((body.tags as Body[]).map(tag => [tag._slug, tag.label]), [['news', 'News'], ['tech', 'Tech']])
    t.match(body.seo, { image: `${PUBLIC_URL}/api/assets/seo.png`, by: { _slug: 'joe', name: 'Joe', friends: ['jane'] } },
      'nested reference resolved; its own references stay slugs at the last level')
    t.same(body.blocks, [{ text: 'quote', image: `${PUBLIC_URL}/api/assets/block.png` }], 'asset paths in arrays too')
    t.equal(body.cover, `${PUBLIC_URL}/api/assets/cover.png`)

    const viaTrue = await c.get('/api/content/posts/hello?_resolve=true')
    t.equal(viaTrue.body, res.body, '_resolve=true is _resolve=1')
    const again = await c.get('/api/content/posts/hello?_resolve=1', { 'if-none-match': res.headers.etag as string })
    t.equal(again.statusCode, 304)
    const off = await c.get('/api/content/posts/hello?_resolve=0')
    t.equal(off.body, (await c.get('/api/content/posts/hello')).body, '_resolve=0 resolves nothing')
  })

  t.test('depth and cycles: a→b→a stops at the entry already on the path', async t => {
    const c = await setup(t, env)
    await c.create(t, 'posts', { _slug: 'a', title: 'A' })
    await c.create(t, 'posts', { _slug: 'b', title: 'B', related: ['a'] })
    t.equal((await c.put('posts/a', { title: 'A', related: ['b'] })).statusCode, 200)

    const one = await getJson(t, c, '/api/content/posts/a?_resolve=1')
    t.same((one.related as Body[]).map(r => [r._slug, r.related]), [['b', ['a']]], 'one level')

    const three = await getJson(t, c, '/api/content/posts/a?_resolve=3')
    const b = (three.related as Body[])[0] as Body
    t.equal(b._slug, 'b')
    t.same(b.related, ['a'], 'a is on the path a→b: left as its slug, however deep')

    await c.create(t, 'posts', { _slug: 'c', title: 'C', related: ['a'] })
    t.equal((await c.put('posts/b', { title: 'B', related: ['a', 'c'] })).statusCode, 200)
    const five = await getJson(t, c, '/api/content/posts/a?_resolve=5')
    const b5 = (five.related as Body[])[0] as Body
    const [aAgain, c5] = b5.related as [string, Body]
    t.equal(aAgain, 'a')
    t.equal(c5._slug, 'c')
    t.same(c5.related, ['a'], 'a→b→c→a: a stays a slug')
    const two = await getJson(t, c, '/api/content/posts/a?_resolve=2')
    t.same(((two.related as Body[])[0]?.related as Array<Body | string>).map(r => typeof r === 'string' ? r : [r._slug, r.related]),
      ['a', ['c', ['a']]], 'two levels: the second level keeps its references as slugs')
  })

  t.test('a field list resolves only those fields (dotted paths too), one level', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const body = await getJson(t, c, '/api/content/posts/hello?_resolve=author')
    t.equal((body.author as Body)._slug, 'jane')
    t.same(body.tags, ['news', 'tech'], 'not listed: slugs')
    t.equal((body.seo as Body).by, 'joe')
    t.equal(body.cover, `${PUBLIC_URL}/api/assets/cover.png`, 'asset paths are expanded with any _resolve')
    const nested = await getJson(t, c, '/api/content/posts/hello?_resolve=seo.by,tags')
    t.equal(nested.author, 'jane')
    t.equal(((nested.seo as Body).by as Body).name, 'Joe')
    t.equal((nested.tags as Body[]).length, 2)
  })

  t.test('bad _resolve values: 400 naming _resolve', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    for (const value of ['6', '99', 'title', 'nope', 'author,nope', '', ',', '-1', '1.5']) {
      for (const url of [`/api/content/posts/hello?_resolve=${value}`, `/api/content/posts?_resolve=${value}`]) {
        const res = await c.get(url)
        assertError(t, res, 400, 'BAD_REQUEST')
        t.match(res.json().message, /_resolve/, `${url}: names _resolve`)
      }
    }
    const twice = await c.get('/api/content/posts/hello?_resolve=1&_resolve=2')
    assertError(t, twice, 400, 'BAD_REQUEST')
    t.match(JSON.stringify(twice.json()), /_resolve/)
  })

  t.test('missing targets and drafts hidden from the caller: null, or left out of a multiple reference', async t => {
    const c = await setup(t, { ...env, ...KEYS_ENV }, {}, auth(ADMIN_KEY))
    await seed(t, c)
    t.equal((await c.put('authors/jane', { name: 'Jane', _status: 'draft' })).statusCode, 200)
    t.equal((await c.put('tags/tech', { label: 'Tech', _status: 'draft' })).statusCode, 200)
    t.equal((await c.del('authors/joe')).statusCode, 204)

    const anonymous = await getJson(t, c, '/api/content/posts/hello?_resolve=1', { authorization: '' })
    t.equal(anonymous.author, null, 'a draft author is null for a caller without a key')
    t.same((anonymous.tags as Body[]).map(tag => tag._slug), ['news'], 'a draft tag is left out')
    t.equal((anonymous.seo as Body).by, null, 'a deleted author is null')

    const admin = await getJson(t, c, '/api/content/posts/hello?_resolve=1')
    t.equal((admin.author as Body)._status, 'draft', 'a caller who sees drafts gets them')
    t.same((admin.tags as Body[]).map(tag => tag._slug), ['news', 'tech'])
    t.equal((admin.seo as Body).by, null, 'gone for everyone')

    const list = await getJson(t, c, '/api/content/posts?_resolve=1', { authorization: '' })
    t.equal((list.items as Body[])[0]?.author, null, 'lists hide them too')
  })

  t.test('lists: every item resolved, with one batched read per collection and level', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    for (let i = 0; i < 30; i++) {
      await c.create(t, 'posts', { _slug: `p${i}`, title: `P${i}`, author: i % 2 === 0 ? 'jane' : 'joe', tags: ['news'], related: ['hello'], seo: { by: 'joe' } })
    }
    const calls = spyGetMany(c)
    const res = await c.get('/api/content/posts?_resolve=1&_per_page=100&_sort=_slug')
    t.equal(res.statusCode, 200)
    const body = res.json()
    assertShape(t, EntryList, body)
    t.equal(res.headers.etag, etagOf(res.body), 'lists answer with an ETag')
    t.equal(body.items.length, 31)
    const p1 = (body.items as Body[]).find(p => p._slug === 'p1') as Body
    t.equal((p1.author as Body).name, 'Joe')
    t.equal(((p1.related as Body[])[0] as Body)._slug, 'hello')
    t.same(calls.map(call => call.split(':')[0]).sort(), ['authors', 'posts', 'tags'], 'one read per target collection: no query per reference')

    calls.length = 0
    const deep = await c.get('/api/content/posts?_resolve=3&_per_page=100')
    t.equal(deep.statusCode, 200)
    t.ok(calls.length <= 3 * 3, `at most one read per (collection, level): ${calls.length}`)

    const fields = await getJson(t, c, '/api/content/posts?_resolve=1&_fields=title,author&_per_page=5&_sort=_slug')
    const first = (fields.items as Body[])[0] as Body
    t.same(Object.keys(first), [...SYSTEM, 'title', 'author'], '_fields and _resolve together')
    t.equal((first.author as Body)._slug, 'jane')
  })

  t.test('environments: expanded asset URLs carry _environment off the default environment', async t => {
    const c = await setup(t, { ...env, CMS_ENVIRONMENTS: 'main,staging' })
    for (const environment of ['main', 'staging']) {
      const q = `?_environment=${environment}`
      await c.create(t, 'authors', { _slug: 'jane', name: 'Jane', avatar: '/api/assets/jane.png' }, undefined, q)
      await c.create(t, 'posts', { _slug: 'hello', title: 'Hello', author: 'jane', cover: `${PUBLIC_URL}/api/assets/cover.png?_environment=${environment}` }, undefined, q)
    }
    const main = await getJson(t, c, '/api/content/posts/hello?_resolve=1&_environment=main')
    t.equal(main.cover, `${PUBLIC_URL}/api/assets/cover.png`, 'the default environment: no parameter')
    t.equal((main.author as Body).avatar, `${PUBLIC_URL}/api/assets/jane.png`)
    const staging = await getJson(t, c, '/api/content/posts/hello?_resolve=1&_environment=staging')
    t.equal(staging.cover, `${PUBLIC_URL}/api/assets/cover.png?_environment=staging`)
    t.equal((staging.author as Body).avatar, `${PUBLIC_URL}/api/assets/jane.png?_environment=staging`)
    const stored = await getJson(t, c, '/api/content/posts/hello?_environment=staging')
    t.equal(stored.cover, '/api/assets/cover.png', 'what a resolved read gave back is stored relative again')
  })

  t.test('a url field holding a public asset URL: stored relative, written back as read, absolute on _resolve', async t => {
    const c = await setup(t, env)
    await c.create(t, 'authors', { _slug: 'jane', name: 'Jane', homepage: `${PUBLIC_URL}/api/assets/cv/jane.pdf` })
    const stored = await getJson(t, c, '/api/content/authors/jane')
    t.equal(stored.homepage, '/api/assets/cv/jane.pdf')
    const { _slug: _s, _created_at: _c, _updated_at: _u, ...rest } = stored
    const put = await c.put('authors/jane', rest)
    t.equal(put.statusCode, 200, 'what a read gave back validates on a write', { body: put.body })
    t.equal(put.json().homepage, '/api/assets/cv/jane.pdf')
    t.equal((await getJson(t, c, '/api/content/authors/jane?_resolve=1')).homepage, `${PUBLIC_URL}/api/assets/cv/jane.pdf`)
    const bad = await c.put('authors/jane', { ...rest, homepage: '/etc/passwd' })
    assertError(t, bad, 422, 'VALIDATION_FAILED')
    t.match(bad.json().errors, [/^homepage: /], 'the error names the field')
  })

  t.test('references are formatted per schema on read', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    const list = await getJson(t, c, '/api/content/posts')
    const hello = (list.items as Body[]).find(p => p._slug === 'hello') as Body
    t.equal(hello.author, 'jane')
    t.same(hello.tags, ['news', 'tech'])
  })

  t.test('kept resolved texts, response cache off: a repeated read reads no target, and every write shows', async t => {
    const c = await setup(t, { ...env, CMS_CACHE_MAX: '0' })
    await seed(t, c)
    for (let i = 0; i < 6; i++) {
      await c.create(t, 'posts', { _slug: `p${i}`, title: `P${i}`, author: i % 2 === 0 ? 'jane' : 'joe', tags: ['news'], related: ['hello'] })
    }
    const url = '/api/content/posts?_resolve=1&_sort=_slug&_per_page=100'
    const names = (body: Body): unknown[] => (body.items as Body[]).map(p => (p.author as Body | null)?.name ?? null)
    const first = await c.get(url)
    // Texts are kept from their second making (lib/content/json-memo.ts KeptTexts).
    await c.get(url)
    const calls = spyGetMany(c)
    const again = await c.get(url)
    t.equal(again.body, first.body, 'the same answer')
    // Texts are kept per stored entry: the PostgreSQL store reads its entries afresh each time
    // (another process may have written them), so there the answers are checked, not the reads.
    const keepsEntries = store !== 'postgres'
    if (keepsEntries) t.same(calls, [], 'no target read: the kept texts hold while no embedded collection was written')
    t.same(names(first.json()), ['Jane', 'Jane', 'Joe', 'Jane', 'Joe', 'Jane', 'Joe'])

    t.equal((await c.put('authors/jane', { name: 'Jane Doe' })).statusCode, 200)
    t.same(names(await getJson(t, c, url)), ['Jane Doe', 'Jane Doe', 'Joe', 'Jane Doe', 'Joe', 'Jane Doe', 'Joe'], 'an embedded entry written')
    await c.create(t, 'authors', { _slug: 'idle', name: 'Idle' })
    calls.length = 0
    const unrelated = await c.get(url)
    t.ok(calls.length > 0, 'a write to an embedded collection: the texts are checked against the store')
    calls.length = 0
    t.equal((await c.get(url)).body, unrelated.body)
    if (keepsEntries) t.same(calls, [], 'found current, and kept: no read the time after')

    t.equal((await c.del('tags/news')).statusCode, 204)
    const untagged = await getJson(t, c, url)
    t.same((untagged.items as Body[]).map(p => (p.tags as Body[]).map(tag => tag._slug)), [['tech'], [], [], [], [], [], []], 'an embedded entry deleted')
    t.equal((await c.put('posts/p3', { title: 'P3', author: 'idle' })).statusCode, 200)
    t.same(names(await getJson(t, c, url))[4], 'Idle', 'a root written')
    const single = await getJson(t, c, '/api/content/posts/p3?_resolve=1')
    t.match(single.author, { _slug: 'idle', name: 'Idle' }, 'a single entry alike')
  })

  t.test('answers are exact JSON: kept entry texts and spliced leaves read as a whole serialization would', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    // A NUL character in the data looks like the placeholders embedded entries are spliced by:
    // the answer is then built whole, and reads the same.
    await c.create(t, 'authors', { _slug: 'nul', name: '\u00000', avatar: '/api/assets/nul.png' })
    await c.create(t, 'posts', { _slug: 'nul-post', title: '\u00001', author: 'nul', tags: ['news'] })
    for (const url of [
      '/api/content/posts', '/api/content/posts?_resolve=1', '/api/content/posts?_resolve=2', '/api/content/posts?_fields=title',
      '/api/content/posts/hello', '/api/content/posts/hello?_resolve=1', '/api/content/posts/nul-post?_resolve=1', '/api/content/authors/nul'
    ]) {
      for (let round = 0; round < 2; round++) {
        const res = await c.get(url)
        t.equal(res.statusCode, 200)
        t.equal(res.body, JSON.stringify(JSON.parse(res.body)), `${url}: canonical JSON (round ${round + 1})`)
        t.equal(res.headers.etag, etagOf(res.body))
      }
    }
    const list = await getJson(t, c, '/api/content/posts?_resolve=1')
    t.same(Object.keys(list), ['items', 'total', 'page', 'per_page', 'pages', 'next'])
    const nul = (list.items as Body[]).find(p => p._slug === 'nul-post') as Body
    t.equal(nul.title, '\u00001')
    t.match(nul.author, { _slug: 'nul', name: '\u00000', avatar: `${PUBLIC_URL}/api/assets/nul.png` })
    t.same((nul.tags as Body[]).map(tag => tag.label), ['News'])
    const hello = await getJson(t, c, '/api/content/posts/hello?_resolve=1')
    t.match(hello.author, { _slug: 'jane', name: 'Jane' })

    // A write replaces the entry's text: the next read shows it, resolved or not.
    t.equal((await c.put('authors/jane', { name: 'Jane Doe', avatar: '/api/assets/jane.png' })).statusCode, 200)
    t.match((await getJson(t, c, '/api/content/posts/hello?_resolve=1')).author, { name: 'Jane Doe' })
    t.equal(((await getJson(t, c, '/api/content/authors')).items as Body[]).find(a => a._slug === 'jane')?.name, 'Jane Doe')
  })
})

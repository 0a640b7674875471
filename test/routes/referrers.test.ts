// GET /api/content/<collection>/<slug>/referrers (interface.md "Referrer", "Reverse-reference index").
import t from 'tap'
import { ReferrerList } from '../../routes/api/content/_collection/_slug/referrers/schemas.js'
import path from 'node:path'
import { ADMIN_KEY, KEYS_ENV, assertError, assertShape, auth, eachStore, tempDir } from '../helper.js'
import { SCHEMAS, seed, setup, writeSchemas } from '../lib/references/app-fixture.js'

eachStore(t, async (t, _store, env) => {
  t.test('200 with the referrer records, no key needed', async t => {
    const c = await setup(t, { ...env, ...KEYS_ENV })
    await seed(t, c, auth(ADMIN_KEY))
    await c.create(t, 'posts', { _slug: 'draft-post', title: 'D', _status: 'draft', author: 'jane' }, auth(ADMIN_KEY))
    const res = await c.get('/api/content/authors/jane/referrers')
    t.equal(res.statusCode, 200)
    assertShape(t, ReferrerList, res.json())
    t.same(res.json(), [
      { collection: 'authors', slug: 'joe', field: 'friends', locale: null, title: null },
      { collection: 'posts', slug: 'draft-post', field: 'author', locale: null, title: null },
      { collection: 'posts', slug: 'hello', field: 'author', locale: null, title: null }
    ], 'sorted; no permission check, so drafts that reference it are listed too')
    const joe = await c.get('/api/content/authors/joe/referrers')
    t.same(joe.json(), [{ collection: 'posts', slug: 'hello', field: 'seo.by', locale: null, title: null }], 'a nested field is named by its dotted path')
    t.same((await c.get('/api/content/tags/news/referrers')).json(), [{ collection: 'posts', slug: 'hello', field: 'tags', locale: null, title: null }])
  })

  t.test('no referrers, or no such entry: an empty list', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    for (const url of ['/api/content/posts/hello/referrers', '/api/content/posts/nothing-here/referrers']) {
      const res = await c.get(url)
      t.equal(res.statusCode, 200)
      t.same(res.json(), [])
      assertShape(t, ReferrerList, res.json())
    }
    const normalized = await c.get('/api/content/authors/JANE/referrers')
    t.equal(normalized.json().length, 2, 'the path slug is normalized')
  })

  t.test('unknown or reusable collection: 404; a bad slug: 400', async t => {
    const c = await setup(t, env)
    assertError(t, await c.get('/api/content/nope/x/referrers'), 404, 'NOT_FOUND')
    assertError(t, await c.get('/api/content/base/x/referrers'), 404, 'NOT_FOUND')
    assertError(t, await c.get('/api/content/authors/a..b/referrers'), 400, 'BAD_REQUEST')
  })

  t.test('updates and deletes show at once', async t => {
    const c = await setup(t, env)
    await seed(t, c)
    t.equal((await c.put('posts/hello', { title: 'Hello', author: 'joe' })).statusCode, 200)
    t.same((await c.get('/api/content/authors/jane/referrers')).json().map((r: { slug: string }) => r.slug), ['joe'])
    t.same((await c.get('/api/content/authors/joe/referrers')).json(), [{ collection: 'posts', slug: 'hello', field: 'author', locale: null, title: null }])
    t.equal((await c.del('posts/hello')).statusCode, 204)
    t.same((await c.get('/api/content/authors/joe/referrers')).json(), [], 'the deleted entry no longer refers')
    t.equal((await c.del('authors/jane')).statusCode, 204)
    t.same((await c.get('/api/content/authors/jane/referrers')).json(), [], 'the deleted entry is no longer referenced')
  })

  t.test('locales: no parameter, every locale is listed with its own', async t => {
    const c = await setup(t, { ...env, CMS_LOCALES: 'en,de' })
    await c.create(t, 'authors', { _slug: 'jane', name: 'Jane' })
    await c.create(t, 'authors', { _slug: 'jane', name: 'Jane DE' }, undefined, '?_locale=de')
    await c.create(t, 'posts', { _slug: 'hello', title: 'Hello', author: 'jane' })
    await c.create(t, 'posts', { _slug: 'hallo', title: 'Hallo', author: 'jane' }, undefined, '?_locale=de')
    const expected = [
      { collection: 'posts', slug: 'hallo', field: 'author', locale: 'de', title: null },
      { collection: 'posts', slug: 'hello', field: 'author', locale: 'en', title: null }
    ]
    t.same((await c.get('/api/content/authors/jane/referrers')).json(), expected)
    t.same((await c.get('/api/content/authors/jane/referrers?_locale=de')).json(), expected, '_locale changes nothing')
    assertShape(t, ReferrerList, expected)
  })

  t.test('environments configured: always an empty list', async t => {
    const c = await setup(t, { ...env, CMS_ENVIRONMENTS: 'main,staging' })
    await seed(t, c)
    await c.create(t, 'authors', { _slug: 'ann', name: 'Ann' }, undefined, '?_environment=staging')
    await c.create(t, 'posts', { _slug: 'p', title: 'P', author: 'ann' }, undefined, '?_environment=staging')
    for (const url of ['/api/content/authors/jane/referrers', '/api/content/authors/ann/referrers?_environment=staging']) {
      const res = await c.get(url)
      t.equal(res.statusCode, 200)
      t.same(res.json(), [])
    }
    assertError(t, await c.get('/api/content/nope/x/referrers'), 404, 'NOT_FOUND')
  })

  t.test('titles from display_field; paging with _page and _per_page; the total in X-Total-Count', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    writeSchemas(dataDir, SCHEMAS.map(s => s.name === 'posts' ? { ...s, display_field: 'title' } : s.name === 'authors' ? { ...s, display_field: 'homepage' } : s))
    const c = await setup(t, { ...env, ...KEYS_ENV }, { dataDir })
    await c.create(t, 'authors', { _slug: 'jane', name: 'Jane' }, auth(ADMIN_KEY))
    await c.create(t, 'authors', { _slug: 'joe', name: 'Joe', friends: ['jane'] }, auth(ADMIN_KEY))
    for (let i = 0; i < 5; i++) await c.create(t, 'posts', { _slug: `p${i}`, title: `Post ${i}`, author: 'jane' }, auth(ADMIN_KEY))
    await c.create(t, 'posts', { _slug: 'secret', title: 'Not yet', author: 'jane', _status: 'draft' }, auth(ADMIN_KEY))
    const all = await c.get('/api/content/authors/jane/referrers')
    assertShape(t, ReferrerList, all.json())
    t.equal(all.headers['x-total-count'], '7')
    t.same(all.json().map((r: { slug: string, title: string | null }) => [r.slug, r.title]), [
      ['joe', null], ['p0', 'Post 0'], ['p1', 'Post 1'], ['p2', 'Post 2'], ['p3', 'Post 3'], ['p4', 'Post 4'], ['secret', null]
    ], 'an unset display field, and an anonymous caller\'s draft, have no title')
    const keyed = await c.get('/api/content/authors/jane/referrers', auth(ADMIN_KEY))
    t.equal(keyed.json()[6].title, 'Not yet', 'a caller who sees drafts sees its title')
    const page2 = await c.get('/api/content/authors/jane/referrers?_per_page=3&_page=2')
    t.equal(page2.headers['x-total-count'], '7')
    t.same(page2.json().map((r: { slug: string }) => r.slug), ['p2', 'p3', 'p4'])
    t.same((await c.get('/api/content/authors/jane/referrers?_per_page=3&_page=3')).json().map((r: { slug: string }) => r.slug), ['secret'])
    t.same((await c.get('/api/content/authors/jane/referrers?_per_page=3&_page=9')).json(), [], 'past the end: empty')
    t.same((await c.get('/api/content/authors/jane/referrers?_page=2')).json(), [], 'without _per_page, page 1 is everything')
    assertError(t, await c.get('/api/content/authors/jane/referrers?_per_page=0'), 400, 'BAD_REQUEST')
    assertError(t, await c.get('/api/content/authors/jane/referrers?_per_page=1001'), 400, 'BAD_REQUEST')
    assertError(t, await c.get('/api/content/authors/jane/referrers?_page=0'), 400, 'BAD_REQUEST')
  })
})

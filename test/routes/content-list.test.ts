// GET /api/content/<collection> (contract §4 "List", interface.md list rules and visibility),
// against both stores. The query engine's parameters and operators in depth are tested with
// the parser and the stores; here: the endpoint, its envelope, visibility, projection, ETags.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, eachStore, type Env } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { listSchema } from '../../routes/api/content/_collection/schemas.js'
import { etagOf } from '../../lib/etag.js'

type Item = Record<string, unknown> & { _slug: string, _status: string }
interface ListBody { items: Item[], total: number, page: number, per_page: number, pages: number }

const PUBLISHED = 25
const DRAFTS = 3

/** 25 published posts (p01..p25) and 3 drafts (d1..d3). */
async function seeded (t: Test, env: Env): Promise<FastifyInstance> {
  const { app } = await buildWithSchemas(t, env)
  const headers = auth(ADMIN_KEY)
  for (let i = 1; i <= PUBLISHED; i++) {
    const n = String(i).padStart(2, '0')
    const res = await app.inject({
      method: 'POST',
      url: '/api/content/posts',
      headers,
      payload: { _slug: `p${n}`, title: `Post ${n}`, rating: (i % 5) + 1, kind: i % 2 === 0 ? 'news' : 'blog', seo: { title: `SEO ${n}` } }
    })
    t.equal(res.statusCode, 201)
  }
  for (let i = 1; i <= DRAFTS; i++) {
    const res = await app.inject({ method: 'POST', url: '/api/content/posts', headers, payload: { _slug: `d${i}`, _status: 'draft', title: `Draft ${i}` } })
    t.equal(res.statusCode, 201)
  }
  return app
}

async function list (t: Test, app: FastifyInstance, query: string, headers: Record<string, string> = {}): Promise<ListBody> {
  const res = await app.inject({ method: 'GET', url: `/api/content/posts${query}`, headers })
  t.equal(res.statusCode, 200, `GET ${query}`, { body: res.body })
  const body = res.json<ListBody>()
  assertShape(t, listSchema.response[200], body)
  return body
}

eachStore(t, async (t, _store, env) => {
  t.test('the envelope and paging', async t => {
    const app = await seeded(t, { ...env, ...KEYS_ENV })
    const admin = auth(ADMIN_KEY)
    const first = await list(t, app, '?_sort=_slug', admin)
    t.same([first.total, first.page, first.per_page, first.pages, first.items.length], [28, 1, 20, 2, 20])
    t.same(first.items.slice(0, 4).map(i => i._slug), ['d1', 'd2', 'd3', 'p01'])
    const second = await list(t, app, '?_sort=_slug&_page=2', admin)
    t.same([second.page, second.items.length], [2, 8])
    t.same(second.items.at(-1)?._slug, 'p25')
    const beyond = await list(t, app, '?_sort=_slug&_page=3', admin)
    t.same([beyond.total, beyond.pages, beyond.items.length], [28, 2, 0], 'past the last page: no items, same total')
    const small = await list(t, app, '?_sort=-_slug&_per_page=5', admin)
    t.same(small.items.map(i => i._slug), ['p25', 'p24', 'p23', 'p22', 'p21'])
    t.same([small.per_page, small.pages], [5, 6])

    const item = first.items[3] as Item
    t.same(Object.keys(item).slice(0, 4), ['_slug', '_status', '_created_at', '_updated_at'], 'items carry the system fields first')
    const single = await app.inject({ method: 'GET', url: '/api/content/posts/p01' })
    t.same(item, single.json(), 'an item is the entry as a single GET gives it')

    const filtered = await list(t, app, '?kind=news&rating[gte]=3&_sort=-rating,_slug', admin)
    t.ok(filtered.items.length > 0)
    t.ok(filtered.items.every(i => i.kind === 'news' && (i.rating as number) >= 3), 'filters reach the store')
    const ratings = filtered.items.map(i => i.rating as number)
    t.same(ratings, [...ratings].sort((a, b) => b - a), 'sorted by rating descending')
    t.equal(filtered.total, filtered.items.length)

    const none = await list(t, app, '?title=nothing', admin)
    t.same([none.total, none.pages, none.items], [0, 0, []], 'nothing matches: pages 0')
  })

  t.test('visibility: without a valid key, published only', async t => {
    const app = await seeded(t, { ...env, ...KEYS_ENV })
    const anonymous = await list(t, app, '?_per_page=100')
    t.equal(anonymous.total, PUBLISHED)
    t.ok(anonymous.items.every(i => i._status === 'published'))
    for (const status of ['draft', 'all']) {
      const asked = await list(t, app, `?_per_page=100&_status=${status}`)
      t.equal(asked.total, PUBLISHED, `_status=${status} does not reveal drafts`)
      t.ok(asked.items.every(i => i._status === 'published'))
    }
    const badKey = await list(t, app, '?_per_page=100', { authorization: 'Bearer not-a-valid-key-0000' })
    t.equal(badKey.total, PUBLISHED, 'an unknown key is no key (and no 401 on a read)')

    const viewer = auth(VIEWER_KEY)
    t.equal((await list(t, app, '?_per_page=100', viewer)).total, PUBLISHED + DRAFTS, 'a valid key sees all by default')
    const drafts = await list(t, app, '?_status=draft', viewer)
    t.same(drafts.items.map(i => i._slug).sort(), ['d1', 'd2', 'd3'])
    t.equal((await list(t, app, '?_status=published', viewer)).total, PUBLISHED)
  })

  t.test('visibility: without keys everyone sees drafts', async t => {
    const app = await seeded(t, env)
    t.equal((await list(t, app, '')).total, PUBLISHED + DRAFTS)
    t.equal((await list(t, app, '?_status=draft')).total, DRAFTS)
  })

  t.test('_fields: system fields always, the listed fields, dotted paths', async t => {
    const app = await seeded(t, env)
    const body = await list(t, app, '?_sort=_slug&_fields=title,seo.title&_status=published')
    const item = body.items[0] as Item
    t.same(Object.keys(item), ['_slug', '_status', '_created_at', '_updated_at', 'title', 'seo'])
    t.same(item.seo, { title: 'SEO 01' }, 'only the named part of a nested object')
    const system = await list(t, app, '?_sort=_slug&_fields=_slug&_per_page=1')
    t.same(Object.keys(system.items[0] as Item), ['_slug', '_status', '_created_at', '_updated_at'])
  })

  t.test('ETag and If-None-Match on lists', async t => {
    const app = await seeded(t, env)
    const url = '/api/content/posts?_sort=_slug&_per_page=3'
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200)
    const etag = String(res.headers.etag)
    t.match(etag, /^"[0-9a-f]{16}"$/)
    t.equal(etag, etagOf(res.rawPayload))
    t.equal(res.headers['cache-control'], 'no-cache')
    const hit = await app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })
    t.equal(hit.statusCode, 304)
    t.equal(hit.body, '')
    t.equal(hit.headers.etag, etag)
    const other = await app.inject({ method: 'GET', url: '/api/content/posts?_sort=_slug&_per_page=4', headers: { 'if-none-match': etag } })
    t.equal(other.statusCode, 200, 'another query, another tag')

    t.equal((await app.inject({ method: 'PATCH', url: '/api/content/posts/d1', payload: { title: 'Changed' } })).statusCode, 200)
    const after = await app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })
    t.equal(after.statusCode, 200, 'a write changes the list, and its tag')
    t.not(after.headers.etag, etag)
  })

  t.test('default_sort: the schema order, default_order falling back to desc', async t => {
    const { app } = await buildWithSchemas(t, env)
    for (const name of ['Bea', 'Al', 'Cy']) {
      t.equal((await app.inject({ method: 'POST', url: '/api/content/authors', payload: { _slug: name, name } })).statusCode, 201)
    }
    const res = await app.inject({ method: 'GET', url: '/api/content/authors' })
    t.same(res.json<ListBody>().items.map(i => i.name), ['Cy', 'Bea', 'Al'])
    const asc = await app.inject({ method: 'GET', url: '/api/content/authors?_sort=name' })
    t.same(asc.json<ListBody>().items.map(i => i.name), ['Al', 'Bea', 'Cy'], '_sort wins')
  })

  t.test('errors', async t => {
    const app = await seeded(t, env)
    for (const [query, parameter] of [
      ['_page=0', '_page'], ['_page=x', '_page'], ['_per_page=0', '_per_page'], ['_per_page=1001', '_per_page'],
      ['rating[bogus]=1', 'rating'], ['rating=abc', 'rating'], ['_sort=nope', '_sort'], ['_order=up', '_order'],
      ['_status=gone', '_status']
    ] as const) {
      const res = await app.inject({ method: 'GET', url: `/api/content/posts?${query}` })
      assertError(t, res, 400, 'BAD_REQUEST')
      t.match(res.body, parameter, `the message names ${parameter}`)
    }
    assertError(t, await app.inject({ method: 'GET', url: '/api/content/nope' }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ method: 'GET', url: '/api/content/base' }), 404, 'NOT_FOUND')
  })
})

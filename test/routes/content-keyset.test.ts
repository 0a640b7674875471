// Keyset paging (contract §10) on GET /api/content/<collection>, on every store: `next` in every
// answer, `_after=<next>` for the page after, a walk that meets every entry existing throughout
// exactly once under concurrent writes, with any filter and sort, and the 400s of §4 and §10.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, KEYS_ENV, assertError, assertShape, auth, eachStore } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { listSchema } from '../../routes/api/content/_collection/schemas.js'

type Item = Record<string, unknown> & { _slug: string }
interface ListBody { items: Item[], total: number, page: number | null, per_page: number, pages: number, next: string | null }

const admin = auth(ADMIN_KEY)
const N = 30

/** 30 posts; every third has no rating (no value sorts first ascending, last descending), two drafts. */
async function seeded (t: Test, env: Record<string, string>): Promise<FastifyInstance> {
  const { app } = await buildWithSchemas(t, { ...env, ...KEYS_ENV })
  for (let i = 1; i <= N; i++) {
    const n = String(i).padStart(2, '0')
    const payload: Record<string, unknown> = { _slug: `p${n}`, title: `Post ${String(i % 7)}`, kind: i % 2 === 0 ? 'news' : 'blog', seo: { title: `S${String(i % 4)}` } }
    if (i % 3 !== 0) payload.rating = (i % 5) + 1
    if (i > N - 2) payload._status = 'draft'
    const res = await app.inject({ method: 'POST', url: '/api/content/posts', headers: admin, payload })
    t.equal(res.statusCode, 201)
  }
  return app
}

async function list (t: Test, app: FastifyInstance, query: string, headers: Record<string, string> = admin): Promise<ListBody> {
  const res = await app.inject({ method: 'GET', url: `/api/content/posts?${query}`, headers })
  t.equal(res.statusCode, 200, `GET ?${query}`, { body: res.body })
  const body = res.json<ListBody>()
  assertShape(t, listSchema.response[200], body)
  return body
}

/** Every slug of a walk with `_after`, page by page, and the pages' bodies. */
async function walk (t: Test, app: FastifyInstance, query: string, perPage: number, between?: (page: number) => Promise<void>): Promise<string[]> {
  const slugs: string[] = []
  let body = await list(t, app, `${query}&_per_page=${perPage}`)
  t.equal(body.page, 1)
  for (let page = 1; ; page++) {
    slugs.push(...body.items.map(i => i._slug))
    if (body.next === null) break
    await between?.(page)
    body = await list(t, app, `${query}&_per_page=${perPage}&_after=${encodeURIComponent(body.next)}`)
    t.equal(body.page, null, 'a keyset page has no number')
    t.equal(body.per_page, perPage)
  }
  return slugs
}

eachStore(t, async (t, _store, env) => {
  t.test('a walk visits the same entries, in the same order, as one big page, for any sort and filter', async t => {
    const app = await seeded(t, env)
    const queries = [
      '_sort=_slug', '_sort=-_slug', '_sort=rating', '_sort=-rating', '_sort=rating,-title', '_sort=-title,rating',
      '_sort=seo.title,-_created_at', '_sort=-_updated_at', 'kind=news&_sort=-rating', 'rating[gte]=3&_sort=title',
      '_q=post&_sort=-kind,rating', '_status=published&_sort=rating', ''
    ]
    for (const query of queries) {
      const whole = (await list(t, app, `${query}&_per_page=1000`)).items.map(i => i._slug)
      t.ok(whole.length > 0, `${query} matches something`)
      t.same(await walk(t, app, query, 4), whole, `walk of ?${query}`)
      t.same(await walk(t, app, query, 1), whole, `walk of ?${query}, one per page`)
    }
    const last = await list(t, app, '_sort=_slug&_per_page=1000')
    t.equal(last.next, null, 'the last page has no next')
    const first = await list(t, app, '_sort=_slug&_per_page=5')
    t.type(first.next, 'string')
    const after = await list(t, app, `_sort=_slug&_per_page=5&_after=${first.next ?? ''}`)
    t.same([after.total, after.pages, after.page], [first.total, first.pages, null], 'total and pages as usual')
    const numbered = await list(t, app, '_sort=_slug&_per_page=5&_page=2')
    t.same(after.items, numbered.items, 'the page after page 1 is page 2 when nothing changed')
    t.type(numbered.next, 'string', 'a numbered page has a next too')
    const changedPage = await list(t, app, `_sort=_slug&_per_page=7&_after=${first.next ?? ''}`)
    t.equal(changedPage.items[0]?._slug, numbered.items[0]?._slug, '_per_page may change along a walk')
  })

  t.test('under concurrent writes, an entry that exists throughout, unchanged in its sort fields, is met exactly once', async t => {
    const app = await seeded(t, env)
    for (const query of ['_sort=rating,title', '_sort=-_slug', 'kind=blog&_sort=-rating']) {
      const before = new Set((await list(t, app, `${query}&_per_page=1000`)).items.map(i => i._slug))
      const touched = new Set<string>()
      let made = 0
      const slugs = await walk(t, app, query, 3, async page => {
        // Each page: a new entry sorting anywhere, an existing one deleted, another edited outside the sort fields.
        made++
        const slug = `n${String(made).padStart(2, '0')}-${query.length}`
        const created = await app.inject({ method: 'POST', url: '/api/content/posts', headers: admin, payload: { _slug: slug, title: 'Post 0', kind: 'blog', rating: (page % 5) + 1 } })
        t.equal(created.statusCode, 201)
        const victim = [...before].filter(s => !touched.has(s))[page * 3 % 7]
        if (victim !== undefined) {
          touched.add(victim)
          const res = await app.inject({ method: 'DELETE', url: `/api/content/posts/${victim}`, headers: admin })
          t.equal(res.statusCode, 204)
        }
        const edited = [...before].filter(s => !touched.has(s))[page % 5]
        if (edited !== undefined) {
          const res = await app.inject({ method: 'PATCH', url: `/api/content/posts/${edited}`, headers: admin, payload: { body: `edit ${page}` } })
          t.equal(res.statusCode, 200)
        }
      })
      const seen = new Map<string, number>()
      for (const slug of slugs) seen.set(slug, (seen.get(slug) ?? 0) + 1)
      for (const slug of before) {
        if (!touched.has(slug)) t.equal(seen.get(slug), 1, `${slug} (there throughout) met once in ?${query}`)
      }
      t.ok([...seen.values()].every(count => count === 1), 'no entry twice')
      // Start again from a clean state for the next query.
      for (const slug of slugs) {
        if (slug.startsWith('n')) await app.inject({ method: 'DELETE', url: `/api/content/posts/${slug}`, headers: admin })
      }
    }
  })

  t.test('a descending walk ends with the entries without a value, however many there are, as writes change that', async t => {
    const app = await seeded(t, env)
    const unrated = (await list(t, app, 'rating[exists]=false&_per_page=1000')).items.map(i => i._slug)
    for (const slug of unrated) t.equal((await app.inject({ method: 'DELETE', url: `/api/content/posts/${slug}`, headers: admin })).statusCode, 204)
    const rated = (await list(t, app, '_sort=-rating&_per_page=1000')).items.map(i => i._slug)
    t.same(await walk(t, app, '_sort=-rating', 4), rated, 'none without a value: the walk ends with the last rated entry')
    const created = await app.inject({ method: 'POST', url: '/api/content/posts', headers: admin, payload: { _slug: 'zz-unrated', title: 'Post 1', kind: 'news' } })
    t.equal(created.statusCode, 201)
    t.same(await walk(t, app, '_sort=-rating', 4), [...rated, 'zz-unrated'], 'one created since: the last page has it')
  })

  t.test('cursors: malformed, with _page, or for another query are a 400', async t => {
    const app = await seeded(t, env)
    const first = await list(t, app, 'kind=news&_sort=-rating&_per_page=3')
    const next = first.next ?? ''
    const bad = async (query: string, mentions: RegExp, headers = admin): Promise<void> => {
      const res = await app.inject({ method: 'GET', url: `/api/content/posts?${query}`, headers })
      assertError(t, res, 400, 'BAD_REQUEST')
      t.match(res.json<{ message: string }>().message, mentions, query)
    }
    await bad(`kind=news&_sort=-rating&_after=${next}&_page=2`, /'_after' and '_page'/)
    await bad('kind=news&_sort=-rating&_after=not-a-cursor', /'_after'.*not a cursor/)
    await bad('kind=news&_sort=-rating&_after=%2B%2B', /'_after'/)
    await bad(`kind=news&_sort=-rating&_after=${Buffer.from('[1,"x",[1],"a"]').toString('base64url')}`, /'_after'.*another query/)
    await bad(`kind=news&_sort=-rating&_after=${Buffer.from('[2,"x",[1],"a"]').toString('base64url')}`, /'_after'.*not a cursor/)
    await bad(`kind=news&_sort=-rating&_after=${Buffer.from('[1,"x",[{}],"a"]').toString('base64url')}`, /'_after'.*not a cursor/)
    await bad(`kind=blog&_sort=-rating&_after=${next}`, /another query/)
    await bad(`kind=news&_sort=rating&_after=${next}`, /another query/)
    await bad(`kind=news&_sort=-rating&_q=x&_after=${next}`, /another query/)
    await bad(`kind=news&_sort=-rating&_after=${next}`, /another query/, {})
    await bad(`kind=news&_sort=-rating&_after=${next}&_after=${next}`, /_after/)
    const fine = await list(t, app, `kind=news&_sort=-rating&_after=${next}&_fields=title`)
    t.ok(fine.items.every(i => Object.keys(i).includes('title') && !Object.keys(i).includes('kind')), '_fields may change along a walk')
  })
})

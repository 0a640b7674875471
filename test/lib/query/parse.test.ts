// The list query parser: every parameter of contract §4 "List", every error, and the shapes
// Fastify's query string parser delivers.
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { CmsError } from '../../../lib/errors.js'
import { parseListQuery, type ParseOptions } from '../../../lib/query/parse.js'
import type { FieldRef, ListQuery } from '../../../types/query.js'
import type { ResolvedSchema } from '../../../types/schema.js'

const base = (over: Partial<ResolvedSchema> = {}): ResolvedSchema => ({
  name: 'posts',
  reusable: false,
  strict: true,
  extends: null,
  fields: {
    title: { field_type: 'string' },
    body: { field_type: 'markdown' },
    views: { field_type: 'integer' },
    price: { field_type: 'number' },
    featured: { field_type: 'boolean' },
    day: { field_type: 'date' },
    published_at: { field_type: 'datetime' },
    category: { field_type: 'select', options: ['news', 'blog'] },
    size: { field_type: 'select', options: [1, 2, 3] },
    tags: { field_type: 'multiselect', options: ['a', 'b'] },
    author: { field_type: 'reference', collection: 'authors' },
    related: { field_type: 'reference', collection: 'posts', multiple: true },
    scores: { field_type: 'array', items: { field_type: 'number' } },
    blocks: { field_type: 'array', items: { field_type: 'object', fields: { kind: { field_type: 'string' } } } },
    seo: { field_type: 'object', fields: { title: { field_type: 'string' }, weight: { field_type: 'number' } } },
    meta: { field_type: 'json' }
  },
  ...over
})

const strict = base()
const loose = base({ strict: false })
const authed: ParseOptions = { seesDrafts: true }
const anonymous: ParseOptions = { seesDrafts: false }

const parse = (raw: Record<string, unknown>, schema = strict, options = authed): ListQuery => parseListQuery(raw, schema, options)
const field = (name: string, kind: FieldRef['kind'], array = false): FieldRef =>
  ({ name, path: name.split('.'), system: false, kind, array })

function bad (t: Test, raw: Record<string, unknown>, mentions: string | RegExp, schema = strict): void {
  try {
    parse(raw, schema)
    t.fail(`expected a 400 for ${JSON.stringify(raw)}`)
  } catch (err) {
    t.ok(err instanceof CmsError && err.code === 'BAD_REQUEST' && err.statusCode === 400, `400 for ${JSON.stringify(raw)}`)
    t.match((err as Error).message, mentions, 'the message names the parameter')
  }
}

t.test('defaults', async t => {
  t.same(parse({}), { page: 1, perPage: 20, sort: [], status: 'all', q: null, fields: null, filters: [], after: null })
  t.equal(parse({}, strict, anonymous).status, 'published')
})

t.test('_page and _per_page', async t => {
  t.equal(parse({ _page: '3' }).page, 3)
  t.equal(parse({ _per_page: '1' }).perPage, 1)
  t.equal(parse({ _per_page: '1000' }).perPage, 1000)
  t.equal(parse({ _page: 2, _per_page: 50 }).perPage, 50, 'numbers from a coercing route schema')
  bad(t, { _page: '0' }, /'_page'/)
  bad(t, { _page: '-1' }, /'_page'/)
  bad(t, { _page: 'x' }, /'_page'/)
  bad(t, { _page: '1.5' }, /'_page'/)
  bad(t, { _page: '' }, /'_page'/)
  bad(t, { _page: '99999999999' }, /'_page'/)
  bad(t, { _per_page: '0' }, /'_per_page'/)
  bad(t, { _per_page: '1001' }, /'_per_page'/)
  bad(t, { _per_page: 'ten' }, /'_per_page'/)
  bad(t, { _page: ['1', '2'] }, /'_page' must be given once/)
  t.equal(parse({ _page: ['2'] }).page, 2, 'a one-item array is one value')
})

t.test('_sort and _order', async t => {
  t.same(parse({ _sort: 'title' }).sort, [{ field: field('title', 'string'), direction: 'asc' }])
  t.same(parse({ _sort: '-views,title', _order: 'desc' }).sort, [
    { field: field('views', 'number'), direction: 'desc' },
    { field: field('title', 'string'), direction: 'desc' }
  ], '`-` forces desc; _order applies to unprefixed keys')
  t.same(parse({ _sort: ' title , -seo.weight ', _order: 'ASC' }).sort, [
    { field: field('title', 'string'), direction: 'asc' },
    { field: field('seo.weight', 'number'), direction: 'desc' }
  ], 'dotted paths, spaces trimmed, _order case-insensitive')
  t.same(parse({ _sort: ['title', '-views'] }).sort.map(s => s.field.name), ['title', 'views'], 'a repeated _sort extends the list')
  t.same(parse({ _sort: '_slug,-_created_at,_updated_at' }).sort, [
    { field: { name: '_slug', path: [], system: true, kind: 'string', array: false }, direction: 'asc' },
    { field: { name: '_created_at', path: [], system: true, kind: 'date', array: false }, direction: 'desc' },
    { field: { name: '_updated_at', path: [], system: true, kind: 'date', array: false }, direction: 'asc' }
  ], 'system fields')
  t.same(parse({ _sort: 'published_at' }).sort[0]?.field.kind, 'date')
  t.same(parse({ _sort: 'day' }).sort[0]?.field.kind, 'date')
  t.same(parse({ _sort: 'featured' }).sort[0]?.field.kind, 'boolean')
  t.same(parse({ _sort: 'size' }).sort[0]?.field.kind, 'number', 'a select with numeric options compares numbers')
  t.same(parse({ _sort: 'meta.rank' }).sort[0]?.field, field('meta.rank', 'string'), 'inside a json field: any path, as text')
  bad(t, { _sort: 'unknown.path' }, /'_sort'.*'unknown.path' is not a field/, loose)
  bad(t, { _sort: 'titel' }, /'_sort'.*Did you mean 'title'\?/, loose)
  t.same(parse({ _sort: '' }).sort, [], 'empty _sort: no sort')
  bad(t, { _sort: 'nope' }, /'_sort'.*'nope'/)
  bad(t, { _sort: 'tags' }, /'_sort'.*array/)
  bad(t, { _sort: 'seo' }, /'_sort'.*object/)
  bad(t, { _sort: 'blocks.kind' }, /'_sort'.*array/)
  bad(t, { _sort: 'title.x' }, /'_sort'.*no nested fields/)
  bad(t, { _sort: '-' }, /'_sort'/)
  bad(t, { _sort: 'a..b' }, /'_sort'/, loose)
  bad(t, { _sort: '_status' }, /'_sort'/)
  bad(t, { _order: 'up' }, /'_order'/)
  bad(t, { _order: ['asc', 'desc'] }, /'_order'/)
})

t.test('default_sort and default_order', async t => {
  t.same(parse({}, base({ default_sort: 'views' })).sort, [{ field: field('views', 'number'), direction: 'desc' }], 'desc when default_order is absent')
  t.same(parse({}, base({ default_sort: 'views', default_order: 'asc' })).sort[0]?.direction, 'asc')
  t.same(parse({ _order: 'asc' }, base({ default_sort: 'views' })).sort[0]?.direction, 'desc', '_order applies to _sort only')
  t.same(parse({ _sort: 'title' }, base({ default_sort: 'views' })).sort.map(s => s.field.name), ['title'], '_sort wins')
  t.same(parse({}, base({ default_sort: '_created_at' })).sort[0]?.field.name, '_created_at')
  t.same(parse({}, base({ default_sort: 'gone' })).sort, [], 'a default_sort naming nothing sortable is ignored, never a 400')
})

t.test('_status', async t => {
  t.equal(parse({ _status: 'draft' }).status, 'draft')
  t.equal(parse({ _status: 'published' }).status, 'published')
  t.equal(parse({ _status: 'all' }).status, 'all')
  for (const asked of ['draft', 'all', 'published']) {
    t.equal(parse({ _status: asked }, strict, anonymous).status, 'published', `anonymous asking ${asked} gets published`)
  }
  bad(t, { _status: 'archived' }, /'_status'/)
  bad(t, { '_status[eq]': 'draft' }, /'_status/)
})

t.test('_q and _fields', async t => {
  t.equal(parse({ _q: '  Crème  ' }).q, 'Crème', 'trimmed')
  t.equal(parse({ _q: '   ' }).q, null)
  bad(t, { _q: 'a\u0000b' }, /'_q'/)
  bad(t, { _q: ['a', 'b'] }, /'_q'/)
  t.same(parse({ _fields: 'title, seo.title' }).fields, ['title', 'seo.title'])
  t.same(parse({ _fields: ['title', 'views'] }).fields, ['title', 'views'])
  t.same(parse({ _fields: '_slug,_status' }).fields, [], 'only system fields: no data field')
  t.same(parse({ _fields: '' }).fields, null)
  bad(t, { _fields: 'whatever' }, /'_fields'.*'whatever'/, loose)
  bad(t, { _fields: 'title,nope' }, /'_fields'.*'nope'/)
})

t.test('parameters that belong to others, and unknown ones', async t => {
  t.same(parse({ _resolve: '1', _locale: 'en', _environment: 'staging', _: '1700000000' }).filters, [])
  t.same(parse({ _preview: 'x' }, strict, { seesDrafts: true, ignore: ['_preview'] }).filters, [], 'options.ignore')
  bad(t, { _per_pag: '10' }, /Unknown parameter '_per_pag'/)
  bad(t, { _foo: 'x' }, /'_foo'/, loose)
})

t.test('equality and operators', async t => {
  const one = (raw: Record<string, unknown>, schema = strict): unknown => {
    const q = parse(raw, schema)
    return q.filters.map(f => ({ name: f.field.name, kind: f.field.kind, array: f.field.array, op: f.op, value: f.value }))
  }
  t.same(one({ title: 'Hello' }), [{ name: 'title', kind: 'string', array: false, op: 'eq', value: 'Hello' }])
  t.same(one({ 'title[eq]': 'Hello' }), [{ name: 'title', kind: 'string', array: false, op: 'eq', value: 'Hello' }])
  t.same(one({ 'title[ne]': '' }), [{ name: 'title', kind: 'string', array: false, op: 'ne', value: '' }])
  t.same(one({ 'views[gt]': '10' }), [{ name: 'views', kind: 'number', array: false, op: 'gt', value: 10 }])
  t.same(one({ 'price[gte]': '-1.5e2' }), [{ name: 'price', kind: 'number', array: false, op: 'gte', value: -150 }])
  t.same(one({ 'price[lt]': '.5' }), [{ name: 'price', kind: 'number', array: false, op: 'lt', value: 0.5 }])
  t.same(one({ 'views[lte]': ' 7 ' }), [{ name: 'views', kind: 'number', array: false, op: 'lte', value: 7 }])
  t.same(one({ 'views[in]': '1,2,3' }), [{ name: 'views', kind: 'number', array: false, op: 'in', value: [1, 2, 3] }])
  t.same(one({ 'category[nin]': 'news,blog' }), [{ name: 'category', kind: 'string', array: false, op: 'nin', value: ['news', 'blog'] }])
  t.same(one({ 'title[contains]': 'ell' }), [{ name: 'title', kind: 'string', array: false, op: 'contains', value: 'ell' }])
  t.same(one({ 'title[starts]': 'He' }), [{ name: 'title', kind: 'string', array: false, op: 'starts', value: 'He' }])
  t.same(one({ 'title[exists]': 'true' }), [{ name: 'title', kind: 'string', array: false, op: 'exists', value: true }])
  t.same(one({ 'views[exists]': 'false' }), [{ name: 'views', kind: 'number', array: false, op: 'exists', value: false }])
  t.same(one({ featured: 'true' }), [{ name: 'featured', kind: 'boolean', array: false, op: 'eq', value: true }])
  t.same(one({ featured: '0' }), [{ name: 'featured', kind: 'boolean', array: false, op: 'eq', value: false }])
  t.same(one({ size: '2' }), [{ name: 'size', kind: 'number', array: false, op: 'eq', value: 2 }])
  t.same(one({ author: 'jane' }), [{ name: 'author', kind: 'string', array: false, op: 'eq', value: 'jane' }])
  t.same(one({ 'seo.weight[gt]': '1' }), [{ name: 'seo.weight', kind: 'number', array: false, op: 'gt', value: 1 }])
  t.same(one({ 'meta.any.depth': 'x' }), [{ name: 'meta.any.depth', kind: 'string', array: false, op: 'eq', value: 'x' }])
  t.same(one({ 'meta.anything': '5' }, loose), [{ name: 'meta.anything', kind: 'string', array: false, op: 'eq', value: '5' }], 'inside a json field: any path, as text')
})

t.test('typed values: dates as instants', async t => {
  const value = (raw: Record<string, unknown>): unknown => parse(raw).filters[0]?.value
  t.equal(value({ 'published_at[gt]': '2024-01-01T02:00:00+02:00' }), Date.UTC(2024, 0, 1))
  t.equal(value({ 'published_at[gt]': '2024-01-01' }), Date.UTC(2024, 0, 1), 'a date is midnight UTC')
  t.equal(value({ 'day[lt]': '2024-02-29T12:30:15.5Z' }), Date.UTC(2024, 1, 29, 12, 30, 15, 500))
  t.equal(value({ '_created_at[gte]': '2024-03-01T00:00:00Z' }), Date.UTC(2024, 2, 1))
  t.same(value({ 'day[in]': '2024-01-01,2024-01-02' }), [Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 2)])
  t.equal(value({ _slug: 'hello' }), 'hello')
  bad(t, { 'day[gt]': '2024-02-30' }, /'day\[gt\]'.*not an ISO 8601/)
  bad(t, { 'published_at[gt]': 'yesterday' }, /'published_at\[gt\]'/)
  bad(t, { '_updated_at[lt]': '2024-01-01T25:00:00Z' }, /'_updated_at\[lt\]'/)
})

t.test('arrays: equality means contains', async t => {
  const f = (raw: Record<string, unknown>): unknown => parse(raw).filters.map(x => [x.field.kind, x.field.array, x.op, x.value])
  t.same(f({ tags: 'a' }), [['string', true, 'eq', 'a']])
  t.same(f({ 'tags[contains]': 'a' }), [['string', true, 'contains', 'a']])
  t.same(f({ 'scores[contains]': '5' }), [['number', true, 'contains', 5]])
  t.same(f({ 'scores[gt]': '5' }), [['number', true, 'gt', 5]])
  t.same(f({ related: 'x' }), [['string', true, 'eq', 'x']])
  t.same(f({ 'tags[starts]': 'a' }), [['string', true, 'starts', 'a']])
  bad(t, { 'scores[contains]': 'five' }, /'scores\[contains\]'.*not a number/)
})

t.test('repeated filters add conditions', async t => {
  const q = parse({ tags: ['a', 'b'], 'views[gt]': ['1', '2'] })
  t.same(q.filters.map(f => [f.field.name, f.op, f.value]), [['tags', 'eq', 'a'], ['tags', 'eq', 'b'], ['views', 'gt', 1], ['views', 'gt', 2]])
  t.same(parse({ views: { gt: '1', lt: '5' } }).filters.map(f => [f.op, f.value]), [['gt', 1], ['lt', 5]], 'qs-style nesting')
})

t.test('filter errors', async t => {
  bad(t, { 'title[like]': 'x' }, /'title\[like\]'.*unknown operator 'like'/)
  bad(t, { 'title[]': 'x' }, /'title\[\]'.*unknown operator/)
  bad(t, { 'title[eq': 'x' }, /'title\[eq'/)
  bad(t, { 'title[eq][x]': 'x' }, /'title\[eq\]\[x\]'/)
  bad(t, { 'views[gt]': 'ten' }, /'views\[gt\]'.*not a number/)
  bad(t, { views: '1e999' }, /'views'.*not a number/)
  bad(t, { views: '' }, /'views'.*not a number/)
  bad(t, { 'views[in]': '1,,2' }, /'views\[in\]'/)
  bad(t, { featured: 'yes' }, /'featured'.*true or false/)
  bad(t, { 'title[exists]': 'maybe' }, /'title\[exists\]'/)
  bad(t, { 'views[contains]': '1' }, /'views\[contains\]'.*applies to text/)
  bad(t, { 'views[starts]': '1' }, /'views\[starts\]'/)
  bad(t, { 'day[contains]': '2024' }, /'day\[contains\]'/)
  bad(t, { nope: 'x' }, /'nope'.*not a field/)
  bad(t, { 'seo.nope': 'x' }, /'seo\.nope'/)
  bad(t, { seo: 'x' }, /'seo'.*object field/)
  bad(t, { blocks: 'x' }, /'blocks'.*object field/)
  bad(t, { 'blocks.kind': 'x' }, /inside the array field 'blocks'/)
  bad(t, { 'a\u0001b': 'x' }, /not a valid field path/, loose)
  bad(t, { 'a.': 'x' }, /not a valid field path/, loose)
})

t.test('how Fastify delivers the query string', async t => {
  const app = Fastify()
  let seen: Record<string, unknown> = {}
  app.get('/', async (request) => {
    seen = request.query as Record<string, unknown>
    return parseListQuery(seen, strict, authed)
  })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/?title[eq]=Hi&tags=a&tags=b&views%5Bgt%5D=3&_sort=-views&_sort=title&_q=caf%C3%A9' })
  t.same({ ...seen }, { 'title[eq]': 'Hi', tags: ['a', 'b'], 'views[gt]': '3', _sort: ['-views', 'title'], _q: 'café' }, 'brackets stay in the key; repeats become arrays')
  const q = res.json() as ListQuery
  t.same(q.filters.map(f => [f.field.name, f.op, f.value]), [['title', 'eq', 'Hi'], ['tags', 'eq', 'a'], ['tags', 'eq', 'b'], ['views', 'gt', 3]])
  t.same(q.sort.map(s => [s.field.name, s.direction]), [['views', 'desc'], ['title', 'asc']])
  t.equal(q.q, 'café')
})

t.test('undeclared names fail loudly, whatever strict says (contract §4)', async t => {
  for (const schema of [strict, loose]) {
    bad(t, { per_page: '1000' }, /Parameter 'per_page'.*Did you mean '_per_page'\?/, schema)
    bad(t, { auther: 'jane' }, /Parameter 'auther'.*Did you mean 'author'\?/, schema)
    bad(t, { 'auther[ne]': 'jane' }, /Parameter 'auther\[ne\]'.*Did you mean 'author'\?/, schema)
    bad(t, { _sort: '-titel' }, /Parameter '_sort'.*Did you mean 'title'\?/, schema)
    bad(t, { _fields: 'title,bdy' }, /Parameter '_fields'.*'bdy'.*Did you mean 'body'\?/, schema)
    bad(t, { 'seo.titel': 'x' }, /Parameter 'seo.titel'.*Did you mean 'seo.title'\?/, schema)
    bad(t, { _per_pgae: '3' }, /Unknown parameter '_per_pgae'.*Did you mean '_per_page'\?/, schema)
    bad(t, { zzzzzz: '1' }, /^Parameter 'zzzzzz': 'zzzzzz' is not a field of this collection\.$/, schema)
  }
  t.same(parse({ 'meta.free.path': 'x' }, loose).filters.length, 1, 'paths inside a json field stay free')
})

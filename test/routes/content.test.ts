// The entries suite (interface.md "Entries", contract §2 and §4), run against both stores:
// create, read, update (PUT and PATCH) and delete, every rule in order, bad input, drafts,
// ETags and events. Lists: content-list.test.ts; locales, environments, restarts and
// concurrency: content-scope.test.ts.
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, eachStore, type Env } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { createSchema } from '../../routes/api/content/_collection/schemas.js'
import { getSchema, patchSchema, putSchema } from '../../routes/api/content/_collection/_slug/schemas.js'
import { etagOf } from '../../lib/etag.js'
import type { CmsEvent } from '../../types/events.js'

type Body = Record<string, unknown>

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

interface Client {
  app: FastifyInstance
  post: (collection: string, body: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  get: (path: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  put: (path: string, body: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  patch: (path: string, body: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  del: (path: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
}

function client (app: FastifyInstance, defaults: Record<string, string> = {}): Client {
  const send = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) =>
    await app.inject({ method, url, headers: { ...defaults, ...headers }, ...(body === undefined ? {} : { payload: body as Body }) })
  return {
    app,
    post: async (collection, body, headers) => await send('POST', `/api/content/${collection}`, body, headers),
    get: async (path, headers) => await send('GET', `/api/content/${path}`, undefined, headers),
    put: async (path, body, headers) => await send('PUT', `/api/content/${path}`, body, headers),
    patch: async (path, body, headers) => await send('PATCH', `/api/content/${path}`, body, headers),
    del: async (path, headers) => await send('DELETE', `/api/content/${path}`, undefined, headers)
  }
}

async function setup (t: Test, env: Env, extra: Env = {}): Promise<Client & { events: CmsEvent[] }> {
  const { app } = await buildWithSchemas(t, { ...env, ...extra })
  const events: CmsEvent[] = []
  app.events.on(e => { events.push(e) })
  return { ...client(app), events }
}

/** Creates an entry, asserting the 201; returns the body. */
async function created (t: Test, c: Client, collection: string, body: Body, headers?: Record<string, string>): Promise<Body> {
  const res = await c.post(collection, body, headers)
  t.equal(res.statusCode, 201, `created ${String(body._slug)}`, { body: res.body })
  return res.json()
}

eachStore(t, async (t, _store, env) => {
  t.test('create: 201 with system fields, defaults, auto values and normalization', async t => {
    const c = await setup(t, env)
    await created(t, c, 'authors', { _slug: 'ann', name: 'Ann' })
    await created(t, c, 'posts', { _slug: 'first', title: 'First' })
    const res = await c.post('posts', {
      title: 'Hello',
      tags: 'b',
      related: [{ _slug: 'first', title: 'ignored' }],
      author: { _slug: 'ann' },
      seo: { title: 'S' },
      blocks: [{ text: 'p', kind: 'para' }],
      _slug: '  Hello World ',
      _created_at: '1999-01-01T00:00:00.000Z',
      _updated_at: '1999-01-01T00:00:00.000Z',
      price: 9.5,
      meta: { free: ['form'] }
    })
    t.equal(res.statusCode, 201)
    t.match(res.headers['content-type'], /^application\/json/)
    const body = res.json<Body>()
    assertShape(t, createSchema.response[201], body)
    t.equal(body._slug, 'hello-world', 'the slug is normalized')
    t.equal(body._status, 'published', 'no _status: published')
    t.match(body._created_at, ISO_UTC)
    t.not(body._created_at, '1999-01-01T00:00:00.000Z', 'clients cannot set _created_at')
    t.equal(body._created_at, body._updated_at)
    t.equal(body.kind, 'blog', 'default')
    t.equal(body.featured, false, 'default false')
    t.same(body.seo, { title: 'S', noindex: false }, 'defaults inside a nested object')
    t.match(body.uid, UUID, 'auto uuid')
    t.match(body.stamp, ISO_UTC, 'auto now')
    t.same(body.tags, ['b'], 'a lone multi-select value becomes a list')
    t.same(body.related, ['first'], 'reference objects become slugs')
    t.equal(body.author, 'ann')
    t.same(body.blocks, [{ kind: 'para', text: 'p' }])
    t.same(Object.keys(body), [
      '_slug', '_status', '_created_at', '_updated_at',
      'title', 'uid', 'stamp', 'kind', 'tags', 'price', 'featured', 'seo', 'blocks', 'author', 'related', 'meta'
    ], 'system fields, then schema order, whatever order the client sent')
    t.same(Object.keys((body.blocks as Body[])[0] as Body), ['kind', 'text'], 'nested objects in schema order too')

    const read = await c.get('posts/hello-world')
    t.equal(read.statusCode, 200)
    t.equal(read.body, res.body, 'a read answers the bytes the create answered')

    const draft = await created(t, c, 'posts', { _slug: 'draft-one', _status: 'draft', title: 'D' })
    t.equal(draft._status, 'draft')
    const multi = await created(t, c, 'posts', { _slug: 'multi', title: 'M', tags: ['c', 'a', 'c'] })
    t.same(multi.tags, ['a', 'c'], 'multi-select: deduplicated, in options order')
  })

  t.test('create: every rule in order', async t => {
    const c = await setup(t, env, KEYS_ENV)
    const admin = auth(ADMIN_KEY)

    // Rule 1 first: the permission, before the collection, the body or its content type.
    const anonymous = await c.post('nope', '{not json', { 'content-type': 'application/json' })
    assertError(t, anonymous, 401, 'UNAUTHORIZED')
    t.equal(anonymous.headers['www-authenticate'], 'Bearer')
    assertError(t, await c.post('posts', { _slug: 'x', title: 'x' }, { authorization: 'Bearer wrong-key-0123456789' }), 401, 'UNAUTHORIZED')
    assertError(t, await c.post('posts', { _slug: 'x', title: 'x' }, auth(VIEWER_KEY)), 403, 'FORBIDDEN')
    assertError(t, await c.post('posts', 'plain text', { ...auth(VIEWER_KEY), 'content-type': 'text/plain' }), 403, 'FORBIDDEN')
    // Rule 2.
    assertError(t, await c.post('nope', { _status: 'bad' }, admin), 404, 'NOT_FOUND')
    assertError(t, await c.post('base', { _slug: 'x', note: 'n' }, admin), 404, 'NOT_FOUND')
    // Rule 3.
    assertError(t, await c.post('posts', { _status: 'bad', title: 5 }, admin), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', { _slug: 42, title: 'x' }, admin), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', { _slug: null, title: 'x' }, admin), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', { _slug: '', title: 'x' }, admin), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', { _slug: '%%%', title: 'x' }, admin), 400, 'BAD_REQUEST')
    for (const slug of ['a/b', 'a\\b', '..', 'a..b', '../etc/passwd']) {
      const res = await c.post('posts', { _slug: slug, _status: 'bad', title: 5 }, admin)
      assertError(t, res, 400, 'BAD_REQUEST')
      t.match(res.json().message, /path characters/, `path characters in ${slug}`)
    }
    // Rule 4.
    for (const status of ['archived', 'Draft', null, 1]) {
      const res = await c.post('posts', { _slug: 'ok', _status: status, title: 5 }, admin)
      assertError(t, res, 400, 'BAD_REQUEST')
      t.match(res.json().message, /_status/)
    }
    // Rule 7: one message per problem, each naming its field path.
    const invalid = await c.post('posts', {
      _slug: 'ok',
      title: '',
      rating: 9,
      tags: ['z'],
      email: 'nope',
      color: 'red',
      published_on: '2024-13-01',
      seo: { title: 'x'.repeat(61) },
      blocks: [{ text: 'no kind' }],
      stranger: true
    }, admin)
    assertError(t, invalid, 422, 'VALIDATION_FAILED')
    const errors = invalid.json<{ errors: string[] }>().errors
    for (const path of ['title', 'rating', 'tags[0]', 'email', 'color', 'published_on', 'seo.title', 'blocks[0].kind', 'stranger']) {
      t.ok(errors.some(e => e.startsWith(`${path}: `)), `a message for ${path}`, { errors })
    }
    t.ok(errors.every(e => /^[\w.[\]]+: /.test(e)), 'every message starts with a field path and a colon')

    // Rule 8: unique within the collection; rule 10's store, then the 409 for the slug.
    await created(t, c, 'posts', { _slug: 'one', title: 'One', code: 'C-1' }, admin)
    const clash = await c.post('posts', { _slug: 'two', title: 'Two', code: 'C-1' }, admin)
    assertError(t, clash, 422, 'VALIDATION_FAILED')
    t.match(clash.json().errors, [/^code: must be unique/])
    assertError(t, await c.post('posts', { _slug: 'One', title: 'Again', code: 'C-1' }, admin), 409, 'CONFLICT')
    assertError(t, await c.post('posts', { _slug: 'one', title: 'Again' }, admin), 409, 'CONFLICT')
    await created(t, c, 'posts', { _slug: 'two', title: 'Two', code: 'C-2' }, auth(EDITOR_KEY))
  })

  t.test('bad input answers in the error envelope', async t => {
    const c = await setup(t, env, { CMS_BODY_LIMIT: '2048' })
    const json = { 'content-type': 'application/json' }
    assertError(t, await c.post('posts', '{"_slug": "x", ', json), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', '', json), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', '[{"_slug":"x"}]', json), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', '"text"', json), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', 'null', json), 400, 'BAD_REQUEST')
    assertError(t, await c.post('posts', '_slug=x&title=y', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    assertError(t, await c.post('posts', 'hello', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    assertError(t, await c.put('posts/x', 'hello', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    const big = JSON.stringify({ _slug: 'big', title: 'x', body: 'y'.repeat(4096) })
    assertError(t, await c.post('posts', big, json), 413, 'PAYLOAD_TOO_LARGE')
    assertError(t, await c.put('posts/big', big, json), 413, 'PAYLOAD_TOO_LARGE')
    assertError(t, await c.patch('posts/big', big, json), 413, 'PAYLOAD_TOO_LARGE')

    for (const payload of [
      '{"_slug":"evil","title":"x","__proto__":{"polluted":true}}',
      '{"_slug":"evil","title":"x","meta":{"__proto__":{"polluted":true}}}',
      '{"_slug":"evil","title":"x","constructor":{"prototype":{"polluted":true}}}',
      '{"_slug":"evil","title":"x","meta":{"constructor":{"prototype":{"polluted":true}}}}'
    ]) {
      assertError(t, await c.post('posts', payload, json), 400, 'BAD_REQUEST')
      assertError(t, await c.patch('posts/evil', payload, json), 400, 'BAD_REQUEST')
    }
    t.equal(({} as Body).polluted, undefined, 'Object.prototype is untouched')
    assertError(t, await c.get('posts/evil'), 404, 'NOT_FOUND')

    // Slugs with path characters in the URL, encoded so they reach the route (a bare `..`
    // segment is resolved by the URL parser before routing).
    await created(t, c, 'posts', { _slug: 'safe', title: 'x' })
    for (const slug of ['a%2Fb', 'a%5Cb', 'a..b', '..%2Fsafe', '%2E%2E%5Csafe']) {
      assertError(t, await c.get(`posts/${slug}`), 400, 'BAD_REQUEST')
      assertError(t, await c.put(`posts/${slug}`, { title: 'x' }), 400, 'BAD_REQUEST')
      assertError(t, await c.patch(`posts/${slug}`, { title: 'x' }), 400, 'BAD_REQUEST')
      assertError(t, await c.del(`posts/${slug}`), 400, 'BAD_REQUEST')
    }
  })

  t.test('GET: ETag of the exact bytes, 304, Cache-Control; 404s', async t => {
    const c = await setup(t, env)
    await created(t, c, 'posts', { _slug: 'cafe', title: 'Café ☕', body: '"quoted" \\ text' })
    const res = await c.get('posts/cafe')
    t.equal(res.statusCode, 200)
    assertShape(t, getSchema.response[200], res.json())
    t.match(res.headers.etag, /^"[0-9a-f]{16}"$/)
    t.equal(res.headers.etag, etagOf(res.rawPayload), 'a hash of the bytes sent')
    t.equal(res.headers['cache-control'], 'no-cache')
    t.match(res.headers['content-type'], /^application\/json/)
    const etag = String(res.headers.etag)

    for (const header of [etag, etag.slice(1, -1), `W/${etag}`, `"0123456789abcdef", ${etag}`, '*']) {
      const hit = await c.get('posts/cafe', { 'if-none-match': header })
      t.equal(hit.statusCode, 304, `304 for If-None-Match: ${header}`)
      t.equal(hit.body, '', 'no body')
      t.equal(hit.headers.etag, etag)
    }
    const stale = await c.get('posts/cafe', { 'if-none-match': '"0123456789abcdef"' })
    t.equal(stale.statusCode, 200)
    t.equal(stale.body, res.body)
    t.equal((await c.get('posts/cafe')).headers.etag, etag, 'stable while the entry is unchanged')
    t.equal((await c.get('posts/CAFE')).body, res.body, 'the path slug is normalized')

    const put = await c.put('posts/cafe', { title: 'Changed' })
    t.equal(put.statusCode, 200)
    const after = await c.get('posts/cafe', { 'if-none-match': etag })
    t.equal(after.statusCode, 200, 'the old tag no longer matches')
    t.not(after.headers.etag, etag)

    assertError(t, await c.get('posts/missing'), 404, 'NOT_FOUND')
    assertError(t, await c.get('nope/cafe'), 404, 'NOT_FOUND')
    assertError(t, await c.get('base/cafe'), 404, 'NOT_FOUND')
  })

  t.test('drafts: hidden from callers without a valid key when keys are on', async t => {
    const c = await setup(t, env, KEYS_ENV)
    await created(t, c, 'posts', { _slug: 'secret', _status: 'draft', title: 'S' }, auth(EDITOR_KEY))
    await created(t, c, 'posts', { _slug: 'open', title: 'O' }, auth(EDITOR_KEY))
    assertError(t, await c.get('posts/secret'), 404, 'NOT_FOUND')
    assertError(t, await c.get('posts/secret', { authorization: 'Bearer not-a-key-0123456789' }), 404, 'NOT_FOUND')
    assertError(t, await c.get('posts/secret', { 'if-none-match': '*' }), 404, 'NOT_FOUND')
    for (const key of [VIEWER_KEY, EDITOR_KEY, ADMIN_KEY]) {
      const res = await c.get('posts/secret', auth(key))
      t.equal(res.statusCode, 200, 'a valid key sees drafts')
      t.equal(res.json()._status, 'draft')
    }
    t.equal((await c.get('posts/secret', { 'x-api-key': VIEWER_KEY })).statusCode, 200, 'X-API-Key works too')
    t.equal((await c.get('posts/open')).statusCode, 200, 'reads are open')
    t.equal((await c.get('posts/open', { authorization: 'Bearer not-a-key-0123456789' })).statusCode, 200, 'an unknown key on a read is not a 401')
  })

  t.test('drafts: visible to everyone when keys are off', async t => {
    const c = await setup(t, env)
    await created(t, c, 'posts', { _slug: 'secret', _status: 'draft', title: 'S' })
    const res = await c.get('posts/secret')
    t.equal(res.statusCode, 200)
    t.equal(res.json()._status, 'draft')
  })

  t.test('PUT replaces the fields; readonly and auto fields left out keep their value', async t => {
    const c = await setup(t, env)
    const original = await created(t, c, 'posts', {
      _slug: 'p', _status: 'draft', title: 'Old', code: 'OLD', tags: ['a'], seo: { title: 'S' }, rating: 3
    })
    const put = await c.put('posts/p', { _slug: 'ignored', title: 'New', tags: 'c', _created_at: '1999-01-01T00:00:00.000Z' })
    t.equal(put.statusCode, 200)
    const body = put.json<Body>()
    assertShape(t, putSchema.response[200], body)
    t.equal(body._slug, 'p', '_slug in the body is ignored')
    t.equal(body._status, 'draft', 'no _status: the stored one')
    t.equal(body._created_at, original._created_at, '_created_at is kept by the store')
    t.ok(String(body._updated_at) >= String(original._updated_at))
    t.equal(body.uid, original.uid, 'readonly auto field kept')
    t.equal(body.stamp, original.stamp, 'auto field kept')
    t.equal(body.title, 'New')
    t.same(body.tags, ['c'])
    t.equal(body.code, undefined, 'a field left out is gone')
    t.equal(body.rating, undefined)
    t.equal(body.seo, undefined, 'defaults are not applied on update')
    t.equal(body.kind, undefined)
    assertError(t, await c.get('posts/ignored'), 404, 'NOT_FOUND')
    t.equal((await c.get('posts/p')).body, put.body, 'a read answers the bytes the update answered')

    const published = await c.put('posts/p', { _status: 'published', title: 'New' })
    t.equal(published.json()._status, 'published')

    // What a client GETs it can PUT back unchanged.
    const read = await c.get('posts/p')
    const roundTrip = await c.put('posts/p', read.json())
    t.equal(roundTrip.statusCode, 200)
    const { _updated_at: _a, ...before } = read.json<Body>()
    const { _updated_at: _b, ...after } = roundTrip.json<Body>()
    t.same(after, before, 'PUT of a GET body changes nothing but _updated_at')

    const readonly = await c.put('posts/p', { title: '', uid: '00000000-0000-4000-8000-000000000000' })
    assertError(t, readonly, 422, 'VALIDATION_FAILED')
    t.ok(readonly.json().errors.some((e: string) => e.startsWith('uid: ')), 'a readonly change is refused')
    t.ok(readonly.json().errors.some((e: string) => e.startsWith('title: ')), 'with the other problems')
    t.equal((await c.put('posts/p', { title: 'Same uid', uid: original.uid })).statusCode, 200, 'the same readonly value is fine')

    // Unique: excluding the entry itself.
    await created(t, c, 'posts', { _slug: 'q', title: 'Q', code: 'Q-1' })
    t.equal((await c.put('posts/q', { title: 'Q2', code: 'Q-1' })).statusCode, 200, 'its own value is no clash')
    const clash = await c.put('posts/p', { title: 'P', code: 'Q-1' })
    assertError(t, clash, 422, 'VALIDATION_FAILED')
    t.match(clash.json().errors, [/^code: must be unique/])

    // Order: the _status 400 comes before the 404 of a missing entry (update rules 2 and 4).
    assertError(t, await c.put('posts/missing', { _status: 'gone', title: 'x' }), 400, 'BAD_REQUEST')
    assertError(t, await c.put('posts/missing', { title: 'x' }), 404, 'NOT_FOUND')
    assertError(t, await c.put('posts/missing', { title: 5 }), 404, 'NOT_FOUND')
    assertError(t, await c.put('nope/p', { title: 'x' }), 404, 'NOT_FOUND')
    assertError(t, await c.put('base/p', { title: 'x' }), 404, 'NOT_FOUND')
    assertError(t, await c.put('posts/p', { title: 'x', stranger: 1 }), 422, 'VALIDATION_FAILED')
    assertError(t, await c.put('posts/p', '[1]', { 'content-type': 'application/json' }), 400, 'BAD_REQUEST')
  })

  t.test('PUT on a loose collection: the readonly field kept, unknown fields allowed', async t => {
    const c = await setup(t, env)
    await created(t, c, 'authors', { _slug: 'ann', name: 'Ann', handle: 'ann-h', extra: { any: 1 } })
    const put = await c.put('authors/ann', { name: 'Ann B', note: 'free' })
    t.equal(put.statusCode, 200)
    t.match(put.json(), { name: 'Ann B', handle: 'ann-h', note: 'free' })
    t.equal(put.json().extra, undefined)
    const change = await c.put('authors/ann', { name: 'Ann', handle: 'other' })
    assertError(t, change, 422, 'VALIDATION_FAILED')
    t.match(change.json().errors, [/^handle: /])
  })

  t.test('PATCH: a JSON merge patch of the stored entry, then the PUT rules', async t => {
    const c = await setup(t, env)
    const original = await created(t, c, 'posts', {
      _slug: 'p', title: 'T', code: 'C', tags: ['a', 'b'], seo: { title: 'S' }, meta: { keep: 1, drop: 2 }
    })
    const res = await c.patch('posts/p', { seo: { title: null }, code: null, tags: 'c', meta: { drop: null, add: [1] }, _slug: 'zz' },
      { 'content-type': 'application/merge-patch+json' })
    t.equal(res.statusCode, 200)
    const body = res.json<Body>()
    assertShape(t, patchSchema.response[200], body)
    t.equal(body._slug, 'p')
    t.equal(body.title, 'T', 'untouched fields stay')
    t.equal(body.code, undefined, 'null removes')
    t.same(body.tags, ['c'], 'normalized after the merge')
    t.same(body.seo, { noindex: false }, 'nested members merge')
    t.same(body.meta, { keep: 1, add: [1] })
    t.equal(body.uid, original.uid)
    t.equal(body._status, 'published')

    const drafted = await c.patch('posts/p', { _status: 'draft' })
    t.equal(drafted.statusCode, 200, 'application/json is accepted too')
    t.equal(drafted.json()._status, 'draft')
    const { _updated_at: _x, _status: _s1, ...restBefore } = body
    const { _updated_at: _y, _status: _s2, ...restAfter } = drafted.json<Body>()
    t.same(restAfter, restBefore, 'only the status changed')
    t.equal((await c.patch('posts/p', { _status: null })).json()._status, 'draft', 'removing _status keeps it')

    assertError(t, await c.patch('posts/p', { title: null }), 422, 'VALIDATION_FAILED')
    const readonly = await c.patch('posts/p', { uid: '00000000-0000-4000-8000-000000000000' })
    assertError(t, readonly, 422, 'VALIDATION_FAILED')
    t.match(readonly.json().errors, [/^uid: /])
    assertError(t, await c.patch('posts/p', { stranger: 1 }), 422, 'VALIDATION_FAILED')
    assertError(t, await c.patch('posts/missing', { _status: 'bogus' }), 400, 'BAD_REQUEST')
    assertError(t, await c.patch('posts/missing', { title: 'x' }), 404, 'NOT_FOUND')
    assertError(t, await c.patch('posts/p', '[]', { 'content-type': 'application/merge-patch+json' }), 400, 'BAD_REQUEST')
    assertError(t, await c.patch('posts/p', '{"title":', { 'content-type': 'application/merge-patch+json' }), 400, 'BAD_REQUEST')
    t.equal((await c.get('posts/p')).json().title, 'T', 'failed patches changed nothing')
  })

  t.test('DELETE: 204, then 404', async t => {
    const c = await setup(t, env, KEYS_ENV)
    await created(t, c, 'posts', { _slug: 'p', title: 'T' }, auth(EDITOR_KEY))
    assertError(t, await c.del('posts/p'), 401, 'UNAUTHORIZED')
    assertError(t, await c.del('posts/p', auth(VIEWER_KEY)), 403, 'FORBIDDEN')
    assertError(t, await c.del('nope/p', auth(EDITOR_KEY)), 404, 'NOT_FOUND')
    assertError(t, await c.del('base/p', auth(EDITOR_KEY)), 404, 'NOT_FOUND')
    const res = await c.del('posts/p', auth(EDITOR_KEY))
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    assertError(t, await c.get('posts/p', auth(EDITOR_KEY)), 404, 'NOT_FOUND')
    assertError(t, await c.del('posts/p', auth(EDITOR_KEY)), 404, 'NOT_FOUND')
    await created(t, c, 'posts', { _slug: 'p', title: 'Again' }, auth(EDITOR_KEY))
    t.pass('the slug is free again')
  })

  t.test('PUT and PATCH need ContentWrite before anything else', async t => {
    const c = await setup(t, env, KEYS_ENV)
    await created(t, c, 'posts', { _slug: 'p', title: 'T' }, auth(ADMIN_KEY))
    for (const send of [c.put, c.patch]) {
      assertError(t, await send('posts/p', { title: 'x' }), 401, 'UNAUTHORIZED')
      assertError(t, await send('nope/p', '{bad', { 'content-type': 'application/json' }), 401, 'UNAUTHORIZED')
      assertError(t, await send('posts/p', { title: 'x' }, auth(VIEWER_KEY)), 403, 'FORBIDDEN')
      t.equal((await send('posts/p', { title: 'x' }, auth(EDITOR_KEY))).statusCode, 200)
    }
  })

  t.test('the write pipeline: at its event, a write is stored and its collection\'s cached answers are gone', async t => {
    const c = await setup(t, env)
    const scope = { environment: 'default', locale: null }
    const seen: string[] = []
    let revision = c.app.store.revision(scope, 'posts')
    c.app.events.on(e => {
      if (!e.event.startsWith('content.')) return
      const now = c.app.store.revision(scope, 'posts')
      seen.push(`${e.event} stored=${String(now !== revision)} cached=${c.app.responseCache.size}`)
      revision = now
    })
    const writes = [
      async () => await c.post('posts', { _slug: 'x', title: 'T' }),
      async () => await c.put('posts/x', { title: 'U' }),
      async () => await c.del('posts/x')
    ]
    for (const write of writes) {
      t.equal((await c.get('posts')).statusCode, 200)
      t.equal(c.app.responseCache.size, 1, 'the list is cached')
      t.ok([200, 201, 204].includes((await write()).statusCode))
    }
    t.same(seen, ['content.created stored=true cached=0', 'content.updated stored=true cached=0', 'content.deleted stored=true cached=0'])
  })

  t.test('events: content.created, content.updated, content.deleted', async t => {
    const c = await setup(t, env)
    await created(t, c, 'posts', { _slug: 'Ev One', title: 'T' })
    t.equal((await c.put('posts/ev-one', { title: 'U' })).statusCode, 200)
    t.equal((await c.patch('posts/ev-one', { title: 'V' })).statusCode, 200)
    t.equal((await c.del('posts/ev-one')).statusCode, 204)
    const base = { collection: 'posts', slug: 'ev-one', locale: null, environment: 'default' }
    t.same(c.events, [
      { event: 'content.created', ...base },
      { event: 'content.updated', ...base },
      { event: 'content.updated', ...base },
      { event: 'content.deleted', ...base }
    ])
    c.events.length = 0
    await c.post('posts', { _slug: 'ev-one', title: '' })
    await c.put('posts/missing', { title: 'x' })
    await c.del('posts/missing')
    t.same(c.events, [], 'failed writes emit nothing')
  })
})

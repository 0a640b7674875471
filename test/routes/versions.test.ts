// Versions at the API (contract §13) on every store: the list (newest first, paged, after the
// delete, numbering across a re-create), reading a version, restore through every update rule
// (event, change feed, cache, a new version) and through the create rules after a delete,
// CMS_REVISIONS=0 and retention, the key rules, the error answers, and a restart.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, build, eachStore, type Env } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { versionsSchema } from '../../routes/api/content/_collection/_slug/versions/schemas.js'
import { restoreSchema, versionSchema } from '../../routes/api/content/_collection/_slug/versions/_n/schemas.js'
import type { CmsEvent } from '../../types/events.js'

type Body = Record<string, unknown>
interface VersionList { items: Array<{ version: number, status: string, created_at: string }>, total: number, page: number, per_page: number, pages: number }

const admin = auth(ADMIN_KEY)
const editor = auth(EDITOR_KEY)
const viewer = auth(VIEWER_KEY)

async function send (t: Test, app: FastifyInstance, method: string, url: string, payload?: Body, headers = admin): Promise<Body> {
  const res = await app.inject({ method: method as 'POST', url, headers, ...(payload === undefined ? {} : { payload }) })
  t.ok(res.statusCode < 300, `${method} ${url}`, { body: res.body })
  return res.body === '' ? {} : res.json<Body>()
}

async function versions (t: Test, app: FastifyInstance, url: string, headers = admin): Promise<VersionList> {
  const res = await app.inject({ url, headers })
  t.equal(res.statusCode, 200, `GET ${url}`, { body: res.body })
  const body = res.json<VersionList>()
  assertShape(t, versionsSchema.response[200], body)
  return body
}

const numbers = (list: VersionList): number[] => list.items.map(v => v.version)

/** The content events the app emits, as `<event> <slug> <previous>-><status>`. */
function recordEvents (app: FastifyInstance): string[] {
  const log: string[] = []
  app.events.on((e: CmsEvent) => {
    if ('slug' in e && 'status' in e) log.push(`${e.event} ${e.slug} ${String(e.previous_status)}->${String(e.status)}`)
  })
  return log
}

eachStore(t, async (t, _store, env: Env) => {
  const keys = { ...env, ...KEYS_ENV }

  t.test('every write keeps a version: listed newest first, each one readable', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One', code: 'C1' })
    await send(t, app, 'PUT', '/api/content/posts/p', { title: 'Two', code: 'C1' })
    await send(t, app, 'PATCH', '/api/content/posts/p', { _status: 'draft' })
    const list = await versions(t, app, '/api/content/posts/p/versions', viewer)
    t.same(list.items.map(v => [v.version, v.status]), [[3, 'draft'], [2, 'published'], [1, 'published']])
    t.same([list.total, list.page, list.per_page, list.pages], [3, 1, 20, 1])
    const paged = await versions(t, app, '/api/content/posts/p/versions?_page=2&_per_page=2')
    t.same([numbers(paged), paged.pages], [[1], 2])

    const res = await app.inject({ url: '/api/content/posts/p/versions/2', headers: viewer })
    t.equal(res.statusCode, 200, { body: res.body })
    const v2 = res.json<Body>()
    assertShape(t, versionSchema.response[200], v2)
    t.same([v2._slug, v2._status, v2._version, v2.title], ['p', 'published', 2, 'Two'])
    t.same(Object.keys(v2).slice(0, 5), ['_slug', '_status', '_created_at', '_updated_at', '_version'])
    const current = await send(t, app, 'GET', '/api/content/posts/p')
    t.equal(v2._created_at, current._created_at, 'the entry\'s creation time')
    t.equal(v2._updated_at, list.items[1]?.created_at, '_updated_at: when the version was written')
    t.equal(v2.uid, current.uid)
  })

  t.test('versions outlive the delete; a re-create goes on numbering', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' })
    await send(t, app, 'PUT', '/api/content/posts/p', { title: 'Two' })
    await send(t, app, 'DELETE', '/api/content/posts/p')
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions')), [2, 1])
    t.equal((await send(t, app, 'GET', '/api/content/posts/p/versions/1')).title, 'One')
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Again' })
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions')), [3, 2, 1])
  })

  t.test('restore: a normal update (event, change feed, cache, a new version)', async t => {
    const { app } = await buildWithSchemas(t, keys)
    const log = recordEvents(app)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One', code: 'C1' })
    await send(t, app, 'PUT', '/api/content/posts/p', { title: 'Two', code: 'C2' })
    const cursor = (await send(t, app, 'GET', '/api/sync?initial=true')).cursor as string
    const cached = await app.inject({ url: '/api/content/posts/p' })
    t.equal(cached.json<Body>().title, 'Two')
    t.equal((await app.inject({ url: '/api/content/posts/p' })).headers.etag, cached.headers.etag, 'answered from the cache')

    const res = await app.inject({ method: 'POST', url: '/api/content/posts/p/versions/1/restore', headers: editor })
    t.equal(res.statusCode, 200, { body: res.body })
    const restored = res.json<Body>()
    assertShape(t, restoreSchema.response[200], restored)
    t.same([restored.title, restored.code, restored._status], ['One', 'C1', 'published'])
    t.same(log.at(-1), 'content.updated p published->published')
    const anonymous = await app.inject({ url: '/api/content/posts/p' })
    t.equal(anonymous.json<Body>().title, 'One', 'the cached answer was discarded')
    t.not(anonymous.headers.etag, cached.headers.etag)
    const feed = await send(t, app, 'GET', `/api/sync?cursor=${encodeURIComponent(cursor)}`)
    t.same((feed.items as Body[]).map(i => [i.op, i.slug, (i.entry as Body).title]), [['upsert', 'p', 'One']])
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions')), [3, 2, 1])
    t.equal((await send(t, app, 'GET', '/api/content/posts/p/versions/3')).title, 'One')

    // Every update rule: a value another entry has taken since is a 422.
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'q', title: 'Q', code: 'C2' })
    assertError(t, await app.inject({ method: 'POST', url: '/api/content/posts/p/versions/2/restore', headers: admin }), 422, 'VALIDATION_FAILED')
  })

  t.test('restore after the delete creates the entry again, with its status', async t => {
    const { app } = await buildWithSchemas(t, keys)
    const log = recordEvents(app)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Hidden', _status: 'draft' })
    await send(t, app, 'DELETE', '/api/content/posts/p')
    const restored = await send(t, app, 'POST', '/api/content/posts/p/versions/1/restore')
    t.same([restored._status, restored.title], ['draft', 'Hidden'])
    t.same(log.at(-1), 'content.created p null->draft')
    t.equal((await send(t, app, 'GET', '/api/content/posts/p')).title, 'Hidden')
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions')), [2, 1])
  })

  t.test('keys: reads need any valid key (401, not the anonymous view), restore needs ContentWrite', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' })
    for (const url of ['/api/content/posts/p/versions', '/api/content/posts/p/versions/1']) {
      assertError(t, await app.inject({ url }), 401, 'UNAUTHORIZED')
      assertError(t, await app.inject({ url, headers: auth('not-a-key-0123456789abcdef') }), 401, 'UNAUTHORIZED')
      t.equal((await app.inject({ url, headers: viewer })).statusCode, 200)
    }
    const restore = '/api/content/posts/p/versions/1/restore'
    const noKey = await app.inject({ method: 'POST', url: restore })
    assertError(t, noKey, 401, 'UNAUTHORIZED')
    t.equal(noKey.headers['www-authenticate'], 'Bearer')
    assertError(t, await app.inject({ method: 'POST', url: restore, headers: viewer }), 403, 'FORBIDDEN')
  })

  t.test('not found and bad requests', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' })
    assertError(t, await app.inject({ url: '/api/content/nope/p/versions', headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/content/base/p/versions', headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/content/posts/never/versions', headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/content/posts/p/versions/2', headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ method: 'POST', url: '/api/content/posts/p/versions/2/restore', headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ method: 'POST', url: '/api/content/nope/p/versions/1/restore', headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: '/api/content/posts/p/versions/0', headers: admin }), 400, 'BAD_REQUEST')
    assertError(t, await app.inject({ url: '/api/content/posts/p/versions/x', headers: admin }), 400, 'BAD_REQUEST')
    assertError(t, await app.inject({ url: '/api/content/posts/p/versions?_per_page=0', headers: admin }), 400, 'BAD_REQUEST')
    assertError(t, await app.inject({ url: '/api/content/posts/a..b/versions', headers: admin }), 400, 'BAD_REQUEST')
  })

  t.test('CMS_REVISIONS=0 keeps none; CMS_REVISIONS=3 keeps the newest three', async t => {
    const off = (await buildWithSchemas(t, { ...env, CMS_REVISIONS: '0' })).app
    await send(t, off, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' })
    await send(t, off, 'PUT', '/api/content/posts/p', { title: 'Two' })
    t.same(await versions(t, off, '/api/content/posts/p/versions'), { items: [], total: 0, page: 1, per_page: 20, pages: 0 })
    assertError(t, await off.inject({ url: '/api/content/posts/p/versions/1' }), 404, 'NOT_FOUND')

    const three = (await buildWithSchemas(t, { ...env, CMS_REVISIONS: '3' })).app
    await send(t, three, 'POST', '/api/content/posts', { _slug: 'p', title: '1' })
    for (const title of ['2', '3', '4', '5']) await send(t, three, 'PUT', '/api/content/posts/p', { title })
    t.same(numbers(await versions(t, three, '/api/content/posts/p/versions')), [5, 4, 3])
    assertError(t, await three.inject({ url: '/api/content/posts/p/versions/2' }), 404, 'NOT_FOUND')
    t.equal((await send(t, three, 'GET', '/api/content/posts/p/versions/3')).title, '3')
  })

  t.test('versions are kept per locale', async t => {
    const { app } = await buildWithSchemas(t, { ...env, CMS_LOCALES: 'en,de' })
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' })
    await send(t, app, 'POST', '/api/content/posts?_locale=de', { _slug: 'p', title: 'Eins' })
    await send(t, app, 'PUT', '/api/content/posts/p?_locale=de', { title: 'Zwei' })
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions')), [1])
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions?_locale=de')), [2, 1])
    t.equal((await send(t, app, 'GET', '/api/content/posts/p/versions/1?_locale=de')).title, 'Eins')
  })

  t.test('versions survive a restart', async t => {
    const { app, dataDir } = await buildWithSchemas(t, env, { keepOpen: true })
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' })
    await send(t, app, 'PUT', '/api/content/posts/p', { title: 'Two' })
    await app.close()
    const again = await build(t, env, { dataDir })
    t.same(numbers(await versions(t, again, '/api/content/posts/p/versions')), [2, 1])
    t.equal((await send(t, again, 'GET', '/api/content/posts/p/versions/1')).title, 'One')
    await send(t, again, 'PUT', '/api/content/posts/p', { title: 'Three' })
    t.same(numbers(await versions(t, again, '/api/content/posts/p/versions')), [3, 2, 1])
  })

  t.test('keys off: every route is open', async t => {
    const { app } = await buildWithSchemas(t, env)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'One' }, {})
    t.same(numbers(await versions(t, app, '/api/content/posts/p/versions', {})), [1])
    await send(t, app, 'POST', '/api/content/posts/p/versions/1/restore', undefined, {})
  })
})

t.test('the OpenAPI document: the editorial routes, generic and per collection, a key required with keys on', async t => {
  const { app } = await buildWithSchemas(t, KEYS_ENV)
  const doc = (await app.inject({ url: '/api/openapi.json' })).json<{ paths: Record<string, Record<string, Body>>, components: { schemas: Record<string, Body> } }>()
  const suffixes = ['/versions', '/versions/{n}', '/versions/{n}/restore', '/draft', '/draft/publish']
  for (const base of ['/api/content/{collection}/{slug}', '/api/content/posts/{slug}']) {
    for (const suffix of suffixes) t.ok(doc.paths[`${base}${suffix}`], `${base}${suffix}`)
  }
  const getVersions = doc.paths['/api/content/posts/{slug}/versions']?.get
  t.same(getVersions?.security, [{ bearer: [] }, { apiKey: [] }], 'reads need a key')
  t.ok((getVersions?.responses as Body)['401'])
  const ref = (op: Body | undefined, status: string): unknown => ((op?.responses as Record<string, Body>)[status]?.content as Record<string, Body>)['application/json']?.schema
  t.same(ref(doc.paths['/api/content/posts/{slug}/versions/{n}']?.get, '200'), { $ref: '#/components/schemas/posts.Version' })
  t.same(ref(doc.paths['/api/content/posts/{slug}/draft']?.get, '200'), { $ref: '#/components/schemas/posts.Entry' })
  t.same(ref(doc.paths['/api/content/posts/{slug}/draft/publish']?.post, '200'), { $ref: '#/components/schemas/posts.Entry' })
  const putBody = (doc.paths['/api/content/posts/{slug}/draft']?.put?.requestBody as { content: Record<string, Body> }).content['application/json']?.schema
  t.same(putBody, { $ref: '#/components/schemas/posts.Update' }, 'a draft body is an update body')
  t.match(ref(getVersions, '200'), { properties: { items: { items: { properties: { version: {} } } } } }, 'the list keeps its own items')
  t.match(doc.components.schemas['posts.Version'], { additionalProperties: true, properties: { _version: { type: 'integer' }, title: {} } })
})

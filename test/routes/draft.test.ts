// Pending drafts of published entries at the API (contract §13) on every store: saved and
// validated as an update while anonymous reads, lists, cached answers and the change feed stay as
// they were; published through every update rule; discarded; removed with the entry; the key
// rules and error answers; a restart.
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, assertShape, auth, build, eachStore, type Env } from '../helper.js'
import { buildWithSchemas } from '../fixtures/content-schemas.js'
import { getDraftSchema, publishDraftSchema, putDraftSchema } from '../../routes/api/content/_collection/_slug/draft/schemas.js'
import type { CmsEvent } from '../../types/events.js'

type Body = Record<string, unknown>

const admin = auth(ADMIN_KEY)
const editor = auth(EDITOR_KEY)
const viewer = auth(VIEWER_KEY)
const DRAFT = '/api/content/posts/p/draft'

async function send (t: Test, app: FastifyInstance, method: string, url: string, payload?: Body, headers = admin): Promise<LightMyRequestResponse> {
  const res = await app.inject({ method: method as 'POST', url, headers, ...(payload === undefined ? {} : { payload }) })
  t.ok(res.statusCode < 300, `${method} ${url}`, { body: res.body })
  return res
}

const json = (res: LightMyRequestResponse): Body => res.json<Body>()

/** What anonymous readers and the change feed see: the entry's answer, the list's, and the feed since `cursor`. */
async function publicView (app: FastifyInstance, cursor: string): Promise<{ entry: LightMyRequestResponse, list: LightMyRequestResponse, feed: Body[] }> {
  const entry = await app.inject({ url: '/api/content/posts/p' })
  const list = await app.inject({ url: '/api/content/posts' })
  const feed = (await app.inject({ url: `/api/sync?cursor=${encodeURIComponent(cursor)}`, headers: admin })).json<{ items: Body[] }>().items
  return { entry, list, feed }
}

function recordEvents (app: FastifyInstance): string[] {
  const log: string[] = []
  app.events.on((e: CmsEvent) => { if ('slug' in e) log.push(`${e.event} ${e.slug}`) })
  return log
}

eachStore(t, async (t, _store, env: Env) => {
  const keys = { ...env, ...KEYS_ENV }

  t.test('a pending draft leaves the live entry, lists, cache and change feed alone until it is published', async t => {
    const { app } = await buildWithSchemas(t, keys)
    const log = recordEvents(app)
    const created = json(await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Live', code: 'C1', tags: ['a'] }))
    const cursor = (await app.inject({ url: '/api/sync?initial=true', headers: admin })).json<{ cursor: string }>().cursor
    const before = await publicView(app, cursor)
    t.equal(json(before.entry).title, 'Live')

    const res = await send(t, app, 'PUT', DRAFT, { _slug: 'other', title: 'Next', code: 'C1', tags: 'b' }, editor)
    const draft = json(res)
    assertShape(t, putDraftSchema.response[200], draft)
    t.same([draft._slug, draft._status, draft.title, draft.tags], ['p', 'draft', 'Next', ['b']])
    t.equal(draft.uid, created.uid, 'readonly and auto fields left out keep their value')
    t.equal(draft._created_at, created._created_at)
    const read = await send(t, app, 'GET', DRAFT, undefined, viewer)
    assertShape(t, getDraftSchema.response[200], json(read))
    t.same(json(read), draft)

    const during = await publicView(app, cursor)
    t.equal(during.entry.body, before.entry.body, 'the anonymous read is unchanged')
    t.equal(during.entry.headers.etag, before.entry.headers.etag)
    t.equal(during.list.body, before.list.body, 'the list is unchanged')
    t.same(during.feed, [], 'the change feed has nothing new')
    t.same(log, ['content.created p'], 'no event')
    t.equal(json(await send(t, app, 'GET', '/api/content/posts/p/versions')).total, 1, 'no version')

    const published = await send(t, app, 'POST', `${DRAFT}/publish`, undefined, editor)
    assertShape(t, publishDraftSchema.response[200], json(published))
    t.same([json(published).title, json(published)._status], ['Next', 'published'])
    t.same(log, ['content.created p', 'content.updated p'])
    const after = await publicView(app, cursor)
    t.equal(json(after.entry).title, 'Next', 'anonymous readers see it now')
    t.equal((json(after.list).items as Body[])[0]?.title, 'Next', 'and in the list')
    t.same(after.feed.map(i => [i.op, i.slug]), [['upsert', 'p']])
    t.equal(json(await send(t, app, 'GET', '/api/content/posts/p/versions')).total, 2, 'the publish kept a version')
    assertError(t, await app.inject({ url: DRAFT, headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ method: 'POST', url: `${DRAFT}/publish`, headers: admin }), 404, 'NOT_FOUND')
  })

  t.test('a draft is validated as an update; a draft entry is a 409', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Live' })
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'q', title: 'Q', code: 'TAKEN' })
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'd', title: 'D', _status: 'draft' })
    await send(t, app, 'POST', '/api/content/authors', { _slug: 'ann', name: 'Ann', handle: 'ann' })
    const put = async (url: string, payload: unknown): Promise<LightMyRequestResponse> => await app.inject({ method: 'PUT', url, headers: admin, payload: payload as Body })
    const invalid = await put(DRAFT, { title: 'x'.repeat(200), rating: 9 })
    assertError(t, invalid, 422, 'VALIDATION_FAILED')
    t.equal((invalid.json<{ errors: string[] }>()).errors.length, 2, 'one message per problem')
    assertError(t, await put(DRAFT, { title: 'T', code: 'TAKEN' }), 422, 'VALIDATION_FAILED')
    assertError(t, await put(DRAFT, { title: 'T', author: 'nobody' }), 422, 'VALIDATION_FAILED')
    assertError(t, await put('/api/content/authors/ann/draft', { name: 'Ann', handle: 'changed' }), 422, 'VALIDATION_FAILED')
    assertError(t, await put(DRAFT, { title: 'T', _status: 'live' }), 400, 'BAD_REQUEST')
    assertError(t, await put(DRAFT, [1]), 400, 'BAD_REQUEST')
    assertError(t, await put('/api/content/posts/d/draft', { title: 'T' }), 409, 'CONFLICT')
    assertError(t, await put('/api/content/posts/none/draft', { title: 'T' }), 404, 'NOT_FOUND')
    assertError(t, await put('/api/content/nope/p/draft', { title: 'T' }), 404, 'NOT_FOUND')
    assertError(t, await put('/api/content/base/p/draft', { title: 'T' }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ url: DRAFT, headers: admin }), 404, 'NOT_FOUND')

    // A draft that became invalid since (another entry took its value) is refused at publish, and kept.
    await send(t, app, 'PUT', DRAFT, { title: 'T', code: 'FREE' })
    await send(t, app, 'PUT', '/api/content/posts/q', { title: 'Q', code: 'FREE' })
    assertError(t, await app.inject({ method: 'POST', url: `${DRAFT}/publish`, headers: admin }), 422, 'VALIDATION_FAILED')
    t.equal(json(await send(t, app, 'GET', DRAFT)).code, 'FREE')
  })

  t.test('discard; the entry\'s delete removes its draft; PUT _status: draft still unpublishes', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Live' })
    await send(t, app, 'PUT', DRAFT, { title: 'Next' })
    t.equal((await send(t, app, 'DELETE', DRAFT, undefined, editor)).statusCode, 204)
    assertError(t, await app.inject({ url: DRAFT, headers: admin }), 404, 'NOT_FOUND')
    assertError(t, await app.inject({ method: 'DELETE', url: DRAFT, headers: admin }), 404, 'NOT_FOUND')
    t.equal(json(await send(t, app, 'GET', '/api/content/posts/p')).title, 'Live')

    await send(t, app, 'PUT', DRAFT, { title: 'Next' })
    await send(t, app, 'DELETE', '/api/content/posts/p')
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'New' })
    assertError(t, await app.inject({ url: DRAFT, headers: admin }), 404, 'NOT_FOUND')

    const unpublished = json(await send(t, app, 'PUT', '/api/content/posts/p', { title: 'New', _status: 'draft' }))
    t.equal(unpublished._status, 'draft', 'the interface\'s PUT semantics are unchanged')
    assertError(t, await app.inject({ url: '/api/content/posts/p' }), 404, 'NOT_FOUND')
  })

  t.test('keys: reads need any valid key, writes ContentWrite', async t => {
    const { app } = await buildWithSchemas(t, keys)
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Live' })
    await send(t, app, 'PUT', DRAFT, { title: 'Next' })
    assertError(t, await app.inject({ url: DRAFT }), 401, 'UNAUTHORIZED')
    t.equal((await app.inject({ url: DRAFT, headers: viewer })).statusCode, 200)
    const writes: Array<['PUT' | 'DELETE' | 'POST', string]> = [['PUT', DRAFT], ['DELETE', DRAFT], ['POST', `${DRAFT}/publish`]]
    for (const [method, url] of writes) {
      const payload = method === 'PUT' ? { title: 'x' } : undefined
      assertError(t, await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) }), 401, 'UNAUTHORIZED')
      assertError(t, await app.inject({ method, url, headers: viewer, ...(payload === undefined ? {} : { payload }) }), 403, 'FORBIDDEN')
    }
    t.equal(json(await send(t, app, 'GET', DRAFT, undefined, viewer)).title, 'Next', 'refused writes changed nothing')
  })

  t.test('drafts survive a restart, and are kept per environment', async t => {
    const envs = { ...env, CMS_ENVIRONMENTS: 'main,staging' }
    const { app, dataDir } = await buildWithSchemas(t, envs, { keepOpen: true })
    await send(t, app, 'POST', '/api/content/posts', { _slug: 'p', title: 'Live' })
    await send(t, app, 'POST', '/api/content/posts?_environment=staging', { _slug: 'p', title: 'Staged' })
    await send(t, app, 'PUT', `${DRAFT}?_environment=staging`, { title: 'Staged draft' })
    await app.close()
    const again = await build(t, envs, { dataDir })
    assertError(t, await again.inject({ url: DRAFT }), 404, 'NOT_FOUND')
    t.equal(json(await send(t, again, 'GET', `${DRAFT}?_environment=staging`)).title, 'Staged draft')
    t.equal(json(await send(t, again, 'POST', `${DRAFT}/publish?_environment=staging`)).title, 'Staged draft')
    t.equal(json(await send(t, again, 'GET', '/api/content/posts/p')).title, 'Live')
  })
})

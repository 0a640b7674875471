// Entries across locales and environments, across a restart, and under concurrent writes,
// against both stores.
import t from 'tap'
import path from 'node:path'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { assertShape, build, eachStore, tempDir } from '../helper.js'
import { buildWithSchemas, writeSchemas } from '../fixtures/content-schemas.js'
import { getSchema } from '../../routes/api/content/_collection/_slug/schemas.js'
import type { CmsEvent, ContentEvent } from '../../types/events.js'

const post = async (app: FastifyInstance, url: string, payload: Record<string, unknown>): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'POST', url, payload })
const get = async (app: FastifyInstance, url: string): Promise<LightMyRequestResponse> =>
  await app.inject({ method: 'GET', url })

const isContentEvent = (e: CmsEvent): e is ContentEvent => e.event.startsWith('content.')

eachStore(t, async (t, _store, env) => {
  t.test('locales: entries, unique values and events are per locale', async t => {
    const { app } = await buildWithSchemas(t, { ...env, CMS_LOCALES: 'en,de' })
    const events: CmsEvent[] = []
    app.events.on(e => { events.push(e) })
    t.equal((await post(app, '/api/content/posts', { _slug: 'p', title: 'Hello', code: 'X' })).statusCode, 201)
    t.equal((await post(app, '/api/content/posts?_locale=de', { _slug: 'p', title: 'Hallo', code: 'X' })).statusCode, 201,
      'the same slug and unique value in another locale')
    t.equal((await post(app, '/api/content/posts?_locale=en', { _slug: 'p', title: 'Again' })).statusCode, 409)
    t.equal((await post(app, '/api/content/posts?_locale=de', { _slug: 'q', title: 'Q', code: 'X' })).statusCode, 422)

    t.equal((await get(app, '/api/content/posts/p')).json().title, 'Hello', 'no _locale: the first locale')
    t.equal((await get(app, '/api/content/posts/p?_locale=xx')).json().title, 'Hello', 'an unknown locale: the first')
    t.equal((await get(app, '/api/content/posts/p?_locale=de')).json().title, 'Hallo')
    t.equal((await get(app, '/api/content/posts?_locale=de')).json().total, 1)

    t.equal((await app.inject({ method: 'PUT', url: '/api/content/posts/p?_locale=de', payload: { title: 'Servus' } })).statusCode, 200)
    t.equal((await get(app, '/api/content/posts/p')).json().title, 'Hello', 'an update stays in its locale')
    t.equal((await app.inject({ method: 'DELETE', url: '/api/content/posts/p?_locale=de' })).statusCode, 204)
    t.equal((await get(app, '/api/content/posts/p?_locale=de')).statusCode, 404)
    t.equal((await get(app, '/api/content/posts/p?_locale=en')).statusCode, 200)

    t.same(events.filter(isContentEvent).map(e => [e.event, e.locale, e.environment]), [
      ['content.created', 'en', 'default'],
      ['content.created', 'de', 'default'],
      ['content.updated', 'de', 'default'],
      ['content.deleted', 'de', 'default']
    ])
  })

  t.test('environments: content is kept apart', async t => {
    const { app } = await buildWithSchemas(t, { ...env, CMS_ENVIRONMENTS: 'main,staging' })
    const events: CmsEvent[] = []
    app.events.on(e => { events.push(e) })
    t.equal((await post(app, '/api/content/posts?_environment=staging', { _slug: 'p', title: 'Staged' })).statusCode, 201)
    t.equal((await get(app, '/api/content/posts/p')).statusCode, 404, 'not in the default environment')
    t.equal((await get(app, '/api/content/posts/p?_environment=nope')).statusCode, 404, 'an unknown environment: the first')
    t.equal((await get(app, '/api/content/posts/p?_environment=staging')).json().title, 'Staged')
    t.equal((await post(app, '/api/content/posts', { _slug: 'p', title: 'Main' })).statusCode, 201)
    t.equal((await get(app, '/api/content/posts?_environment=main')).json().total, 1)
    t.equal((await get(app, '/api/content/posts/p?_environment=main')).json().title, 'Main')
    t.same(events.filter(isContentEvent).map(e => [e.event, e.locale, e.environment]), [
      ['content.created', null, 'staging'],
      ['content.created', null, 'main']
    ])
  })

  t.test('a restart keeps every entry, byte for byte', async t => {
    const dataDir = path.join(tempDir(t), 'data')
    writeSchemas(dataDir)
    const first = await build(t, { ...env, CMS_LOCALES: 'en,fr' }, { dataDir, keepOpen: true })
    const urls = ['/api/content/posts/a', '/api/content/posts/b', '/api/content/posts/a?_locale=fr', '/api/content/authors/ann']
    t.equal((await post(first, '/api/content/posts', { _slug: 'a', title: 'A', tags: ['b', 'a'], seo: { title: 'S' }, meta: { deep: [1, { x: null }] } })).statusCode, 201)
    t.equal((await post(first, '/api/content/posts', { _slug: 'b', _status: 'draft', title: 'B', code: 'B-1' })).statusCode, 201)
    t.equal((await post(first, '/api/content/posts?_locale=fr', { _slug: 'a', title: 'Á', body: 'é ☕ "q"' })).statusCode, 201)
    t.equal((await post(first, '/api/content/authors', { _slug: 'ann', name: 'Ann', free: 'form' })).statusCode, 201)
    t.equal((await post(first, '/api/content/posts', { _slug: 'gone', title: 'G' })).statusCode, 201)
    t.equal((await first.inject({ method: 'PATCH', url: '/api/content/posts/a', payload: { title: 'A2' } })).statusCode, 200)
    t.equal((await first.inject({ method: 'DELETE', url: '/api/content/posts/gone' })).statusCode, 204)
    const before = await Promise.all(urls.map(async u => await get(first, u)))
    await first.close()

    const second = await build(t, { ...env, CMS_LOCALES: 'en,fr' }, { dataDir })
    for (const [i, u] of urls.entries()) {
      const res = await get(second, u)
      t.equal(res.statusCode, 200, u)
      assertShape(t, getSchema.response[200], res.json())
      t.equal(res.body, before[i]?.body, `${u}: the same bytes`)
      t.equal(res.headers.etag, before[i]?.headers.etag, `${u}: the same ETag`)
    }
    t.equal((await get(second, '/api/content/posts/gone')).statusCode, 404, 'a delete stays deleted')
    t.equal((await get(second, '/api/content/posts?_status=all')).json().total, 2)
    t.equal((await post(second, '/api/content/posts', { _slug: 'a', title: 'dup' })).statusCode, 409)
    t.equal((await post(second, '/api/content/posts', { _slug: 'c', title: 'C', code: 'B-1' })).statusCode, 422, 'unique values survive too')
  })

  t.test('20 concurrent creates of one slug: one 201, nineteen 409s', async t => {
    const { app } = await buildWithSchemas(t, env)
    const results = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await post(app, '/api/content/posts', { _slug: 'race', title: `T${i}` })))
    const statuses = results.map(r => r.statusCode)
    t.equal(statuses.filter(s => s === 201).length, 1)
    t.equal(statuses.filter(s => s === 409).length, 19)
    const winner = results.find(r => r.statusCode === 201)
    t.equal((await get(app, '/api/content/posts/race')).body, winner?.body, 'the stored entry is the one answered 201')
    t.equal((await get(app, '/api/content/posts')).json().total, 1)
  })

  t.test('20 concurrent creates with one unique value: one 201, nineteen 422s', async t => {
    const { app } = await buildWithSchemas(t, env)
    const statuses = (await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await post(app, '/api/content/posts', { _slug: `u${i}`, title: 'T', code: 'SAME' })))).map(r => r.statusCode)
    t.equal(statuses.filter(s => s === 201).length, 1)
    t.equal(statuses.filter(s => s === 422).length, 19)
    t.equal((await get(app, '/api/content/posts')).json().total, 1)
  })

  t.test('20 concurrent patches of one entry: no update is lost', async t => {
    const { app } = await buildWithSchemas(t, env)
    t.equal((await post(app, '/api/content/posts', { _slug: 'p', title: 'T', meta: {} })).statusCode, 201)
    const statuses = (await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await app.inject({ method: 'PATCH', url: '/api/content/posts/p', payload: { meta: { [`k${i}`]: i } } })))).map(r => r.statusCode)
    t.same(statuses, Array(20).fill(200))
    const meta = (await get(app, '/api/content/posts/p')).json().meta as Record<string, number>
    t.equal(Object.keys(meta).length, 20, 'every patch merged into the result of the one before')
  })

  t.test('concurrent deletes of one entry: one 204, the rest 404', async t => {
    const { app } = await buildWithSchemas(t, env)
    t.equal((await post(app, '/api/content/posts', { _slug: 'p', title: 'T' })).statusCode, 201)
    const statuses = (await Promise.all(Array.from({ length: 10 }, async () =>
      await app.inject({ method: 'DELETE', url: '/api/content/posts/p' })))).map(r => r.statusCode)
    t.equal(statuses.filter(s => s === 204).length, 1)
    t.equal(statuses.filter(s => s === 404).length, 9)
  })
})

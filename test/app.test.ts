// The app's error and not-found handlers, body parsing limits and the auth gate, on test routes.
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import app, { serverOptions } from '../app.js'
import { internal, validationFailed } from '../lib/errors.js'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, auth, tempDir, testConfig } from './helper.js'

async function withRoutes (t: Test, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const config = testConfig(`${tempDir(t)}/data`, { CMS_BODY_LIMIT: '1024', ...env })
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })
  await fastify.register(async scoped => {
    scoped.post('/echo', async request => ({ body: request.body, polluted: ({} as Record<string, unknown>).polluted ?? null }))
    scoped.post('/schemas-write', { preHandler: scoped.requirePermission('SchemasWrite') }, async () => ({ ok: true }))
    scoped.get('/boom', async () => { throw new Error('secret detail at /etc/passwd') })
    scoped.get('/internal', async () => { throw internal('disk /var/x unreadable') })
    scoped.get('/invalid', async () => { throw validationFailed(['title: is required']) })
    scoped.get('/typed', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } } } }, async () => ({ ok: true }))
  })
  await fastify.ready()
  t.teardown(async () => { await fastify.close() })
  return fastify
}

t.test('body parser errors render the contract envelope', async t => {
  const f = await withRoutes(t)
  assertError(t, await f.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' }), 400, 'BAD_REQUEST')
  assertError(t, await f.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'text/plain' }, payload: 'hi' }), 415, 'UNSUPPORTED_MEDIA_TYPE')
  assertError(t, await f.inject({ method: 'POST', url: '/echo', payload: { big: 'x'.repeat(2000) } }), 413, 'PAYLOAD_TOO_LARGE')
  const ok = await f.inject({ method: 'POST', url: '/echo', payload: { a: 1 } })
  t.equal(ok.statusCode, 200)
  const merge = await f.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"a":null}' })
  t.same(merge.json().body, { a: null }, 'merge-patch+json is parsed as JSON')
})

t.test('__proto__ and constructor keys are refused and pollute nothing', async t => {
  const f = await withRoutes(t)
  for (const payload of ['{"__proto__":{"polluted":"yes"}}', '{"a":{"constructor":{"prototype":{"polluted":"yes"}}}}']) {
    const res = await f.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload })
    assertError(t, res, 400, 'BAD_REQUEST')
    t.equal(({} as Record<string, unknown>).polluted, undefined)
  }
})

t.test('5xx hide their text; 422 carries errors; route validation is a 400 naming the parameter', async t => {
  const f = await withRoutes(t)
  for (const url of ['/boom', '/internal']) {
    const res = await f.inject({ method: 'GET', url })
    assertError(t, res, 500, 'INTERNAL')
    t.notMatch(res.body, /secret|passwd|\/var/)
  }
  const invalid = await f.inject({ method: 'GET', url: '/invalid' })
  assertError(t, invalid, 422, 'VALIDATION_FAILED')
  t.same(invalid.json().errors, ['title: is required'])
  const typed = await f.inject({ method: 'GET', url: '/typed?n=0' })
  assertError(t, typed, 400, 'BAD_REQUEST')
  t.match(typed.json().message, /querystring\/n/)
})

t.test('not found and wrong method', async t => {
  const f = await withRoutes(t)
  assertError(t, await f.inject({ method: 'GET', url: '/missing?x=1' }), 404, 'NOT_FOUND')
  assertError(t, await f.inject({ method: 'DELETE', url: '/echo' }), 404, 'NOT_FOUND')
})

t.test('requirePermission: 401 without or with an unknown key, 403 for a role without it', async t => {
  const f = await withRoutes(t, KEYS_ENV)
  const none = await f.inject({ method: 'POST', url: '/schemas-write', payload: {} })
  assertError(t, none, 401, 'UNAUTHORIZED')
  t.equal(none.headers['www-authenticate'], 'Bearer')
  assertError(t, await f.inject({ method: 'POST', url: '/schemas-write', payload: {}, headers: auth('wrong-key-0123456789abc') }), 401, 'UNAUTHORIZED')
  assertError(t, await f.inject({ method: 'POST', url: '/schemas-write', payload: {}, headers: auth(EDITOR_KEY) }), 403, 'FORBIDDEN')
  assertError(t, await f.inject({ method: 'POST', url: '/schemas-write', payload: {}, headers: { 'x-api-key': VIEWER_KEY } }), 403, 'FORBIDDEN')
  t.equal((await f.inject({ method: 'POST', url: '/schemas-write', payload: {}, headers: auth(ADMIN_KEY) })).statusCode, 200)
  t.equal((await f.inject({ method: 'POST', url: '/schemas-write', payload: {}, headers: { 'x-api-key': ADMIN_KEY } })).statusCode, 200)
})

t.test('without keys every write is allowed', async t => {
  const f = await withRoutes(t)
  t.equal((await f.inject({ method: 'POST', url: '/schemas-write', payload: {} })).statusCode, 200)
})

t.test('the OpenAPI document and its browsable view are served', async t => {
  const f = await withRoutes(t)
  const doc = await f.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(doc.statusCode, 200)
  t.match(doc.json(), { openapi: /^3\./, info: { title: 'Lectern' } })
  t.ok(doc.json().paths['/health'], 'routes appear in the document')
  const docs = await f.inject({ method: 'GET', url: '/docs/' })
  t.equal(docs.statusCode, 200)
  t.match(docs.headers['content-type'], /text\/html/)
})

// The app's error and not-found handlers, body parsing limits and the auth gate, on test routes.
import { Writable } from 'node:stream'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import app from '../app.js'
import { DataDirLockedError, lockDataDir } from '../lib/data-lock.js'
import { internal, validationFailed } from '../lib/errors.js'
import { createLogger, serverOptions } from '../lib/server-options.js'
import { ADMIN_KEY, EDITOR_KEY, KEYS_ENV, VIEWER_KEY, assertError, auth, build, eachStore, tempDir, testConfig } from './helper.js'

type Line = Record<string, unknown> & { level: number, msg?: string }

/** The app and its test routes on the instance server.ts builds; its log lines, parsed, in `lines`. */
async function withRoutes (t: Test, env: Record<string, string> = {}, lines: Line[] = []): Promise<FastifyInstance> {
  const config = testConfig(`${tempDir(t)}/data`, { CMS_BODY_LIMIT: '1024', ...env })
  const sink = new Writable({
    write (chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Line)
      done()
    }
  })
  const logger: FastifyBaseLogger = createLogger(config, sink)
  const fastify = Fastify({ ...serverOptions(config), loggerInstance: logger, pluginTimeout: 60_000 })
  await fastify.register(app, { config })
  await fastify.register(async scoped => {
    scoped.post('/echo', async request => ({ body: request.body, polluted: ({} as Record<string, unknown>).polluted ?? null }))
    scoped.post('/schemas-write', { preHandler: scoped.requirePermission('SchemasWrite') }, async () => ({ ok: true }))
    scoped.get('/boom', async () => { throw new Error('secret detail at /etc/passwd') })
    scoped.get('/internal', async () => { throw internal('disk /var/x unreadable') })
    scoped.get('/invalid', async () => { throw validationFailed(['title: is required']) })
    scoped.get('/twice', async (_request, reply) => { await reply.send({ first: true }); await reply.send({ second: true }) })
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

t.test('above info: a request that goes well writes nothing; every line that is on reaches the log with its request id', async t => {
  const lines: Line[] = []
  const f = await withRoutes(t, { CMS_LOG_LEVEL: 'warn' }, lines)
  lines.length = 0 // start-up warnings (an admin UI not built yet)
  t.equal(f.log.level, 'warn', "the instance's log is Lectern's logger")
  await f.inject({ url: '/api/collections' })
  await f.inject({ url: '/nowhere' })
  t.same(lines, [], 'requests that go well, and a 404, write nothing')

  const boom = await f.inject({ url: '/boom' })
  t.equal(boom.statusCode, 500)
  t.notMatch(boom.body, /secret detail/)
  t.equal(lines.length, 1, 'one line')
  t.match(lines, [{ level: 50, reqId: /^req-/, msg: 'internal error', err: { message: 'secret detail at /etc/passwd' } }])

  // Fastify's own request-scoped lines go through the same child logger.
  lines.length = 0
  t.same((await f.inject({ url: '/twice' })).json(), { first: true })
  t.equal(lines.length, 1, 'one line')
  t.match(lines, [{ level: 40, reqId: /^req-/, err: { code: 'FST_ERR_REP_ALREADY_SENT' } }])

  lines.length = 0
  f.log.warn('from a plugin')
  t.equal(lines.length, 1, 'one line')
  t.match(lines, [{ level: 40, msg: 'from a plugin' }])
  t.notOk('reqId' in (lines[0] ?? {}), 'instance lines carry no request id')
})

t.test('at info: Fastify logs every request, bound to its id, with the request and reply serialized', async t => {
  const lines: Line[] = []
  const f = await withRoutes(t, { CMS_LOG_LEVEL: 'info' }, lines)
  lines.length = 0 // start-up lines
  const res = await f.inject({ url: '/boom?x=1', headers: { authorization: 'Bearer not-for-logs' } })
  t.equal(res.statusCode, 500)
  t.match(lines, [
    { level: 30, reqId: /^req-/, msg: 'incoming request', req: { method: 'GET', url: '/boom?x=1', remoteAddress: '127.0.0.1' } },
    { level: 50, msg: 'internal error', err: { message: 'secret detail at /etc/passwd' } },
    { level: 30, msg: 'request completed', res: { statusCode: 500 }, responseTime: Number }
  ])
  t.equal(lines.length, 3, 'three lines')
  t.equal(new Set(lines.map(l => l.reqId)).size, 1, 'one request id on all three')
  t.notMatch(JSON.stringify(lines), /not-for-logs/, 'the request is serialized without its headers: no credentials')
})

t.test('content read from the response cache goes out like any reply: logged at info, with CORS headers', async t => {
  const lines: Line[] = []
  const origin = 'https://site.example.com'
  const f = await withRoutes(t, { ...KEYS_ENV, CMS_LOG_LEVEL: 'info', CMS_CORS_ORIGINS: origin, CMS_BODY_LIMIT: '65536' }, lines)
  const created = await f.inject({ method: 'POST', url: '/api/schemas', headers: auth(ADMIN_KEY), payload: { name: 'notes', fields: { title: { field_type: 'string' } } } })
  t.equal(created.statusCode, 201)
  t.equal((await f.inject({ method: 'POST', url: '/api/content/notes', headers: auth(ADMIN_KEY), payload: { _slug: 'a', title: 'A' } })).statusCode, 201)
  for (const url of ['/api/content/notes/a', '/api/content/notes?_sort=title']) {
    const miss = await f.inject({ url, headers: { origin } })
    const hits = f.responseCache.stats.hits
    lines.length = 0
    const hit = await f.inject({ url, headers: { origin } })
    t.equal(f.responseCache.stats.hits, hits + 1, `${url}: the second read is a hit`)
    t.equal(hit.statusCode, 200)
    t.equal(hit.body, miss.body)
    t.equal(hit.headers['access-control-allow-origin'], origin, 'CORS headers on the hit')
    t.equal(hit.headers['access-control-expose-headers'], 'ETag')
    const { date: _m, ...missHeaders } = miss.headers
    const { date: _h, ...hitHeaders } = hit.headers
    t.same(hitHeaders, missHeaders, `${url}: a hit sends the headers a miss sends`)
    t.match(lines, [
      { level: 30, msg: 'incoming request', req: { method: 'GET', url } },
      { level: 30, msg: 'request completed', res: { statusCode: 200 }, responseTime: Number }
    ])
    t.equal(lines.length, 2, 'both request lines, for the hit too')
  }
})

eachStore(t, async (t, kind, env) => {
  t.test('the data dir stays locked until the store has closed (not at all with postgres: contract §12)', async t => {
    const dataDir = `${tempDir(t)}/data`
    if (kind === 'postgres') {
      await build(t, env, { dataDir })
      t.doesNotThrow(() => { lockDataDir(dataDir).release() }, 'processes share the database and may share the data dir')
      return
    }
    const fastify = await build(t, env, { dataDir, keepOpen: true })
    t.throws(() => lockDataDir(dataDir), DataDirLockedError, 'locked while open')
    const store = fastify.store
    const close = store.close.bind(store)
    let heldAtStoreClose = false
    store.close = async () => {
      heldAtStoreClose = t.throws(() => lockDataDir(dataDir), DataDirLockedError) !== undefined
      await close()
    }
    await fastify.close()
    t.ok(heldAtStoreClose, 'still locked while the store closes')
    lockDataDir(dataDir).release()
  })
})

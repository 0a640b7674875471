// The content plugin alone, on a bare instance with stand-ins for the registry and the store.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import configPlugin from '../../plugins/config.js'
import eventsPlugin from '../../plugins/events.js'
import localesPlugin from '../../plugins/locales.js'
import contentPlugin, { routeHasNoSendHooks } from '../../plugins/content.js'
import { ContentService } from '../../lib/content/service.js'
import { etagOf } from '../../lib/etag.js'
import type { CmsEvent } from '../../types/events.js'
import type { SchemaRegistry } from '../../types/schema.js'
import { MemoryStore, fakeRegistry, postsModel } from '../fixtures/content-fakes.js'
import { tempDir, testConfig } from '../helper.js'

const admin = { role: 'admin' as const, authenticated: true, invalidKey: false }

async function bare (t: Test): Promise<{ fastify: FastifyInstance, store: MemoryStore }> {
  const config = testConfig(tempDir(t), { CMS_ENVIRONMENTS: 'main,staging' })
  const fastify = Fastify()
  const store = new MemoryStore()
  await fastify.register(configPlugin, { config })
  await fastify.register(eventsPlugin)
  await fastify.register(localesPlugin)
  await fastify.register(fp(async f => { f.decorate('schemas', fakeRegistry([postsModel()]) as SchemaRegistry) }, { name: 'schemas' }))
  await fastify.register(fp(async f => { f.decorate('store', store) }, { name: 'store' }))
  await fastify.register(contentPlugin)
  t.teardown(async () => { await fastify.close() })
  return { fastify, store }
}

t.test('decorates fastify.content, wired to the registry, the store and the event bus', async t => {
  const { fastify, store } = await bare(t)
  await fastify.ready()
  t.ok(fastify.content instanceof ContentService)
  const events: CmsEvent[] = []
  fastify.events.on(e => { events.push(e) })
  const scope = fastify.scopeOf({ _environment: 'staging' })
  const written = await fastify.content.create(scope, 'posts', { _slug: 'hello', title: 'Hi' })
  t.equal(store.get(scope, 'posts', 'hello')?.data.title, 'Hi')
  t.equal(JSON.parse(written.body)._slug, 'hello')
  t.same(events, [{ event: 'content.created', collection: 'posts', slug: 'hello', locale: null, environment: 'staging' }])
  t.equal(String(fastify.content.get(scope, 'posts', 'hello', admin).body), written.body, 'a write answers the bytes a read gives')
})

t.test('refuses to load without the store', async t => {
  const fastify = Fastify()
  t.teardown(async () => { await fastify.close() })
  await fastify.register(configPlugin, { config: testConfig(tempDir(t)) })
  await fastify.register(eventsPlugin)
  await fastify.register(localesPlugin)
  await fastify.register(fp(async f => { f.decorate('schemas', fakeRegistry([]) as SchemaRegistry) }, { name: 'schemas' }))
  await t.rejects(async () => { await fastify.register(contentPlugin) }, /store/)
})

t.test('reply.sendRendered: ETag, Cache-Control, exact bytes, If-None-Match', async t => {
  const { fastify } = await bare(t)
  const body = '{"b":2,"a":"é"}'
  const etag = etagOf(body)
  fastify.get('/r', async (_request, reply) => reply.sendRendered({ body: Buffer.from(body), etag }))
  fastify.get('/j', async (_request, reply) => reply.code(201).sendJson(body))

  const res = await fastify.inject({ method: 'GET', url: '/r' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, body, 'the bytes as rendered, not re-serialized')
  t.equal(res.headers.etag, etag)
  t.equal(res.headers['cache-control'], 'no-cache')
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.headers['content-length'], String(Buffer.byteLength(body)))

  for (const header of [etag, etag.slice(1, -1), `W/${etag}`, `"0000000000000000", ${etag}`, '*']) {
    const hit = await fastify.inject({ method: 'GET', url: '/r', headers: { 'if-none-match': header } })
    t.equal(hit.statusCode, 304, `304 for If-None-Match: ${header}`)
    t.equal(hit.body, '', 'no body')
    t.equal(hit.headers.etag, etag, 'the ETag is repeated')
  }
  const miss = await fastify.inject({ method: 'GET', url: '/r', headers: { 'if-none-match': '"0000000000000000"' } })
  t.equal(miss.statusCode, 200)
  t.equal(miss.body, body)

  const json = await fastify.inject({ method: 'GET', url: '/j' })
  t.equal(json.statusCode, 201)
  t.equal(json.body, body)
  t.equal(json.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(json.headers.etag, undefined)
})

t.test('reply.sendRendered writes a 200 itself where no onSend hook runs, and the response is the same as through Fastify', async t => {
  const { fastify } = await bare(t)
  const body = '{"items":[],"total":0}'
  const rendered = { body: Buffer.from(body), etag: etagOf(body) }
  const seen: Array<{ url: string, status: number }> = []
  fastify.addHook('onRequest', async (_request, reply) => {
    // Headers an earlier hook sets (as @fastify/cors does) go out on either path.
    reply.header('access-control-allow-origin', 'https://site.example.com')
    reply.header('set-cookie', ['a=1', 'b=2'])
  })
  fastify.addHook('onResponse', async (request, reply) => { seen.push({ url: request.url, status: reply.statusCode }) })
  let direct: boolean | null = null
  fastify.get('/direct', async (request, reply) => {
    direct = routeHasNoSendHooks(request)
    return reply.sendRendered(rendered)
  })
  let hooked: boolean | null = null
  await fastify.register(async scoped => {
    scoped.addHook('onSend', async (_request, reply, payload) => {
      reply.header('x-on-send', 'ran')
      return payload
    })
    scoped.get('/hooked', async (request, reply) => {
      hooked = routeHasNoSendHooks(request)
      return reply.sendRendered(rendered)
    })
  })

  const a = await fastify.inject({ method: 'GET', url: '/direct' })
  const b = await fastify.inject({ method: 'GET', url: '/hooked' })
  t.equal(direct, true, "Fastify's route context is found: a route without onSend hooks is written directly")
  t.equal(hooked, false, 'a route with an onSend hook is not')
  t.equal(b.headers['x-on-send'], 'ran', 'so its hook runs')
  for (const res of [a, b]) {
    t.equal(res.statusCode, 200)
    t.equal(res.body, body)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.headers['content-length'], String(body.length))
    t.equal(res.headers.etag, rendered.etag)
    t.equal(res.headers['cache-control'], 'no-cache')
    t.equal(res.headers['access-control-allow-origin'], 'https://site.example.com')
    t.same(res.headers['set-cookie'], ['a=1', 'b=2'])
  }
  const { 'x-on-send': _hook, date: _a, ...direct200 } = a.headers
  const { 'x-on-send': _none, date: _b, ...fastify200 } = b.headers
  t.same(direct200, fastify200, 'the same headers either way')
  t.same(seen, [{ url: '/direct', status: 200 }, { url: '/hooked', status: 200 }], 'onResponse hooks run on both, with the status sent')

  // HEAD (Fastify's HEAD routes drop the body in an onSend hook) and 304 take Fastify's path.
  const head = await fastify.inject({ method: 'HEAD', url: '/direct' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], String(body.length))
  t.equal(head.headers.etag, rendered.etag)
  const notModified = await fastify.inject({ method: 'GET', url: '/direct', headers: { 'if-none-match': rendered.etag } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, rendered.etag)
})

t.test('reply.sendRendered: a header value that cannot be sent fails the reply as it does through Fastify', async t => {
  const { fastify } = await bare(t)
  const rendered = { body: Buffer.from('{}'), etag: etagOf('{}') }
  fastify.addHook('onRequest', async (_request, reply) => { reply.header('x-bad', 'a\nb') })
  fastify.get('/direct', async (_request, reply) => reply.sendRendered(rendered))
  await fastify.register(async scoped => {
    scoped.addHook('onSend', async (_request, _reply, payload) => payload)
    scoped.get('/hooked', async (_request, reply) => reply.sendRendered(rendered))
  })
  const direct = await fastify.inject({ method: 'GET', url: '/direct' })
  const hooked = await fastify.inject({ method: 'GET', url: '/hooked' })
  t.equal(direct.statusCode, 500)
  t.equal(direct.json().code, 'ERR_INVALID_CHAR')
  t.equal(direct.body, hooked.body, 'the same answer either way')
  t.equal(hooked.statusCode, 500)
})

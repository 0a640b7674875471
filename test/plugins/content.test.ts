// The content plugin alone, on a bare instance with stand-ins for the registry, the store and
// the references plugin (the real reference service over them), and the real cache plugin.
import http from 'node:http'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import configPlugin from '../../plugins/config.js'
import eventsPlugin from '../../plugins/events.js'
import localesPlugin from '../../plugins/locales.js'
import cachePlugin from '../../plugins/cache.js'
import contentPlugin, { routeHasNoSendHooks } from '../../plugins/content.js'
import { ContentService } from '../../lib/content/service.js'
import { etagOf } from '../../lib/etag.js'
import type { CmsEvent } from '../../types/events.js'
import type { SchemaRegistry } from '../../types/schema.js'
import { MemoryStore, fakeRegistry, postsModel, referenceService } from '../fixtures/content-fakes.js'
import { spyWriteHead, tempDir, testConfig } from '../helper.js'

const admin = { role: 'admin' as const, authenticated: true, invalidKey: false }

/** What the content plugin depends on, on a bare instance: the store and the references are stand-ins. */
async function dependencies (fastify: FastifyInstance, t: Test, store: MemoryStore): Promise<void> {
  const registry = fakeRegistry([postsModel()])
  await fastify.register(configPlugin, { config: testConfig(tempDir(t), { CMS_ENVIRONMENTS: 'main,staging' }) })
  await fastify.register(eventsPlugin)
  await fastify.register(localesPlugin)
  await fastify.register(fp(async f => { f.decorate('schemas', registry as SchemaRegistry) }, { name: 'schemas' }))
  await fastify.register(fp(async f => { f.decorate('store', store) }, { name: 'store' }))
  await fastify.register(fp(async f => { f.decorate('references', referenceService(registry, store)) }, { name: 'references' }))
  await fastify.register(cachePlugin)
}

async function bare (t: Test): Promise<{ fastify: FastifyInstance, store: MemoryStore }> {
  const fastify = Fastify()
  const store = new MemoryStore()
  await dependencies(fastify, t, store)
  await fastify.register(contentPlugin)
  t.teardown(async () => { await fastify.close() })
  return { fastify, store }
}

t.test('decorates fastify.content, wired to the registry, the store, the references, the cache and the event bus', async t => {
  const { fastify, store } = await bare(t)
  await fastify.ready()
  t.ok(fastify.content instanceof ContentService)
  const events: CmsEvent[] = []
  fastify.events.on(e => { events.push(e) })
  const scope = fastify.scopeOf({ _environment: 'staging' })
  const written = await fastify.content.create(scope, 'posts', { _slug: 'hello', title: 'Hi' })
  t.equal((await store.get(scope, 'posts', 'hello'))?.data.title, 'Hi')
  t.equal(JSON.parse(written.body)._slug, 'hello')
  t.same(events, [{ event: 'content.created', collection: 'posts', slug: 'hello', locale: null, environment: 'staging', seq: 1, status: 'published', previous_status: null }])
  t.equal(String((await fastify.content.get(scope, 'posts', 'hello', admin)).body), written.body, 'a write answers the bytes a read gives')
  t.equal(fastify.responseCache.size, 1, 'the read went through the cache plugin\'s cache')
  await fastify.content.update(scope, 'posts', 'hello', { title: 'Hey' })
  t.equal(fastify.responseCache.size, 0, 'which the write discards')
})

t.test('refuses to load without the store, the references or the cache', async t => {
  for (const missing of ['store', 'references', 'cache']) {
    const fastify = Fastify()
    t.teardown(async () => { await fastify.close() })
    await fastify.register(configPlugin, { config: testConfig(tempDir(t)) })
    await fastify.register(eventsPlugin)
    await fastify.register(localesPlugin)
    const registry = fakeRegistry([])
    const store = new MemoryStore()
    await fastify.register(fp(async f => { f.decorate('schemas', registry as SchemaRegistry) }, { name: 'schemas' }))
    if (missing !== 'store') await fastify.register(fp(async f => { f.decorate('store', store) }, { name: 'store' }))
    if (missing !== 'references') await fastify.register(fp(async f => { f.decorate('references', referenceService(registry, store)) }, { name: 'references' }))
    if (missing !== 'cache') await fastify.register(cachePlugin)
    await t.rejects(async () => { await fastify.register(contentPlugin) }, new RegExp(`'${missing}'`), `without ${missing}`)
  }
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

/** A request over a real socket (keep-alive): status, raw header lines (names lowercased, no date) and body. */
async function overSocket (url: string, method = 'GET', headers: Record<string, string> = {}): Promise<{ status: number, headers: string[], body: string }> {
  const agent = new http.Agent({ keepAlive: true })
  try {
    return await new Promise((resolve, reject) => {
      http.request(url, { method, headers, agent }, res => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const lines: string[] = []
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = (res.rawHeaders[i] ?? '').toLowerCase()
            if (name !== 'date') lines.push(`${name}: ${res.rawHeaders[i + 1] ?? ''}`)
          }
          resolve({ status: res.statusCode ?? 0, headers: lines.sort(), body: Buffer.concat(chunks).toString() })
        })
      }).on('error', reject).end()
    })
  } finally {
    agent.destroy()
  }
}

t.test('a cached hit is written directly where no onSend hook runs, and goes out as it does through Fastify', async t => {
  const { fastify } = await bare(t)
  const body = '{"items":[],"total":0}'
  const rendered = { body: Buffer.from(body), etag: etagOf(body) }
  const seen: Array<{ url: string, status: number }> = []
  fastify.addHook('onRequest', async (_request, reply) => {
    // Headers an earlier hook sets (as @fastify/cors does) go out either way.
    reply.header('access-control-allow-origin', 'https://site.example.com')
    reply.header('set-cookie', ['a=1', 'b=2'])
  })
  fastify.addHook('onResponse', async (request, reply) => { seen.push({ url: request.url, status: reply.statusCode }) })
  const notReached = async (): Promise<never> => { throw new Error('the handler runs only on a miss') }
  let hookSaw: boolean | null = null
  fastify.get('/hit', {
    onRequest: [async request => { hookSaw = routeHasNoSendHooks(request) }, fastify.cachedReply(() => rendered)]
  }, notReached)
  // The same answer through Fastify's send: a miss, rendered by the handler.
  fastify.get('/miss', { onRequest: fastify.cachedReply(() => undefined) }, async (_request, reply) => reply.sendRendered(rendered))
  fastify.get('/coded', { onRequest: [async (_request, reply) => { reply.code(203) }, fastify.cachedReply(() => rendered)] }, notReached)
  let hookedSaw: boolean | null = null
  await fastify.register(async scoped => {
    scoped.addHook('onSend', async (request, reply, payload) => {
      hookedSaw = routeHasNoSendHooks(request)
      reply.header('x-on-send', 'ran')
      return payload
    })
    scoped.get('/hooked', { onRequest: fastify.cachedReply(() => rendered) }, notReached)
  })
  const ways = spyWriteHead(t)

  const hit = await fastify.inject({ method: 'GET', url: '/hit' })
  const miss = await fastify.inject({ method: 'GET', url: '/miss' })
  const hooked = await fastify.inject({ method: 'GET', url: '/hooked' })
  t.equal(hookSaw, true, "Fastify's route context is found: this route has no onSend hook")
  t.equal(hookedSaw, false, 'that one has')
  t.same(Object.fromEntries(ways), { '/hit': ['direct'], '/miss': ['fastify'], '/hooked': ['fastify'] }, 'only the hit on the route without an onSend hook is written directly')
  t.equal(hooked.headers['x-on-send'], 'ran', 'the onSend hook ran')
  for (const res of [hit, miss, hooked]) {
    t.equal(res.statusCode, 200)
    t.equal(res.body, body)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.headers['content-length'], String(body.length))
    t.equal(res.headers.etag, rendered.etag)
    t.equal(res.headers['cache-control'], 'no-cache')
    t.equal(res.headers['access-control-allow-origin'], 'https://site.example.com')
    t.same(res.headers['set-cookie'], ['a=1', 'b=2'])
  }
  const { date: _a, ...hitHeaders } = hit.headers
  const { date: _b, ...missHeaders } = miss.headers
  t.same(hitHeaders, missHeaders, 'the same headers either way')
  t.same(seen, ['/hit', '/miss', '/hooked'].map(url => ({ url, status: 200 })), 'onResponse hooks run, with the status sent')

  // A code set by an earlier hook, HEAD (Fastify's HEAD routes drop the body in an onSend hook)
  // and 304 take Fastify's path.
  ways.clear()
  const coded = await fastify.inject({ method: 'GET', url: '/coded' })
  t.equal(coded.statusCode, 203)
  t.equal(coded.body, body)
  const head = await fastify.inject({ method: 'HEAD', url: '/hit' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], String(body.length))
  t.equal(head.headers.etag, rendered.etag)
  t.same(head.headers['set-cookie'], ['a=1', 'b=2'])
  t.same(Object.fromEntries(ways), { '/coded': ['fastify'], '/hit': ['fastify'] })
  ways.clear()
  const notModified = await fastify.inject({ method: 'GET', url: '/hit', headers: { 'if-none-match': rendered.etag } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, rendered.etag)
  t.same(Object.fromEntries(ways), { '/hit': ['fastify'] })

  // Over a real socket (inject keeps headers its own way): the same header lines, each cookie on
  // its own line, the body's length, keep-alive.
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const address = fastify.server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`
  ways.clear()
  const [socketHit, socketMiss] = [await overSocket(`${base}/hit`), await overSocket(`${base}/miss`)]
  t.same(Object.fromEntries(ways), { '/hit': ['direct'], '/miss': ['fastify'] })
  t.equal(socketHit.status, 200)
  t.equal(socketHit.body, body)
  t.same(socketHit.headers, socketMiss.headers, 'the same header lines')
  t.same(socketHit.headers, [
    'access-control-allow-origin: https://site.example.com',
    'cache-control: no-cache',
    'connection: keep-alive',
    `content-length: ${body.length}`,
    'content-type: application/json; charset=utf-8',
    `etag: ${rendered.etag}`,
    'keep-alive: timeout=72',
    'set-cookie: a=1',
    'set-cookie: b=2'
  ])
  const socketHead = await overSocket(`${base}/hit`, 'HEAD')
  t.same(socketHead.headers, socketHit.headers, 'HEAD: the same header lines')
  t.equal(socketHead.body, '')
})

t.test('a cached hit with a header that cannot be sent fails as it does through Fastify', async t => {
  const { fastify } = await bare(t)
  const rendered = { body: Buffer.from('{}'), etag: etagOf('{}') }
  fastify.addHook('onRequest', async (_request, reply) => {
    reply.header('x-fine', 'yes')
    reply.header('x-bad', 'a\nb')
  })
  const notReached = async (): Promise<never> => { throw new Error('the handler runs only on a miss') }
  fastify.get('/hit', { onRequest: fastify.cachedReply(() => rendered) }, notReached)
  fastify.get('/miss', { onRequest: fastify.cachedReply(() => undefined) }, async (_request, reply) => reply.sendRendered(rendered))
  const ways = spyWriteHead(t)
  const hit = await fastify.inject({ method: 'GET', url: '/hit' })
  const miss = await fastify.inject({ method: 'GET', url: '/miss' })
  t.equal(ways.get('/hit')?.[0], 'direct', 'the hit tried the direct write first')
  t.equal(hit.statusCode, 500)
  t.equal(hit.json().code, 'ERR_INVALID_CHAR')
  t.equal(miss.statusCode, 500)
  t.equal(hit.body, miss.body, 'the same answer either way')
  const { date: _a, ...hitHeaders } = hit.headers
  const { date: _b, ...missHeaders } = miss.headers
  t.same(hitHeaders, missHeaders, 'with the same headers: none of the hit\'s own is left on the error')
})

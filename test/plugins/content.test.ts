// The content plugin alone, on a bare instance with stand-ins for the registry, the store and
// the references plugin (the real reference service over them), the real cache and compression plugins.
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import configPlugin from '../../plugins/config.js'
import eventsPlugin from '../../plugins/events.js'
import localesPlugin from '../../plugins/locales.js'
import cachePlugin from '../../plugins/cache.js'
import compressionPlugin from '../../plugins/compression.js'
import contentPlugin from '../../plugins/content.js'
import { ContentService } from '../../lib/content/service.js'
import { etagOf } from '../../lib/etag.js'
import type { CmsEvent } from '../../types/events.js'
import type { SchemaRegistry } from '../../types/schema.js'
import { MemoryStore, fakeRegistry, postsModel, referenceService } from '../fixtures/content-fakes.js'
import { tempDir, testConfig } from '../helper.js'

const admin = { role: 'admin' as const, authenticated: true, invalidKey: false }

/** What the content plugin depends on, on a bare instance: the store and the references are stand-ins. */
async function dependencies (fastify: FastifyInstance, t: Test, store: MemoryStore, env: Record<string, string> = {}): Promise<void> {
  const registry = fakeRegistry([postsModel()])
  await fastify.register(configPlugin, { config: testConfig(tempDir(t), { CMS_ENVIRONMENTS: 'main,staging', ...env }) })
  await fastify.register(compressionPlugin)
  await fastify.register(eventsPlugin)
  await fastify.register(localesPlugin)
  await fastify.register(fp(async f => { f.decorate('schemas', registry as SchemaRegistry) }, { name: 'schemas' }))
  await fastify.register(fp(async f => { f.decorate('store', store) }, { name: 'store' }))
  await fastify.register(fp(async f => { f.decorate('references', referenceService(registry, store)) }, { name: 'references' }))
  await fastify.register(cachePlugin)
}

async function bare (t: Test, env: Record<string, string> = {}): Promise<{ fastify: FastifyInstance, store: MemoryStore }> {
  const fastify = Fastify()
  const store = new MemoryStore()
  await dependencies(fastify, t, store, env)
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
  t.same(events, [{ event: 'content.created', collection: 'posts', slug: 'hello', locale: null, environment: 'staging' }])
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
    await fastify.register(compressionPlugin)
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

t.test('a cached hit goes out through Fastify\'s send, as the same answer rendered by the handler', async t => {
  const { fastify } = await bare(t)
  const body = '{"items":[],"total":0}'
  const rendered = { body: Buffer.from(body), etag: etagOf(body) }
  const seen: Array<{ url: string, status: number }> = []
  const sent: string[] = []
  fastify.addHook('onRequest', async (_request, reply) => {
    // Headers an earlier hook sets (as @fastify/cors does) go out too.
    reply.header('access-control-allow-origin', 'https://site.example.com')
    reply.header('set-cookie', ['a=1', 'b=2'])
  })
  fastify.addHook('onSend', async (request, _reply, payload) => { sent.push(request.url); return payload })
  fastify.addHook('onResponse', async (request, reply) => { seen.push({ url: request.url, status: reply.statusCode }) })
  const notReached = async (): Promise<never> => { throw new Error('the handler runs only on a miss') }
  fastify.get('/hit', { onRequest: fastify.cachedReply(() => rendered) }, notReached)
  // The same answer rendered by the handler: a miss.
  fastify.get('/miss', { onRequest: fastify.cachedReply(() => undefined) }, async (_request, reply) => reply.sendRendered(rendered))
  fastify.get('/coded', { onRequest: [async (_request, reply) => { reply.code(203) }, fastify.cachedReply(() => rendered)] }, notReached)

  const hit = await fastify.inject({ method: 'GET', url: '/hit' })
  const miss = await fastify.inject({ method: 'GET', url: '/miss' })
  t.same(sent, ['/hit', '/miss'], 'onSend hooks run for the hit too')
  for (const res of [hit, miss]) {
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
  t.same(seen, ['/hit', '/miss'].map(url => ({ url, status: 200 })), 'onResponse hooks run, with the status sent')

  // A code set by an earlier hook stays; HEAD has the headers and no body; If-None-Match: 304.
  const coded = await fastify.inject({ method: 'GET', url: '/coded' })
  t.equal(coded.statusCode, 203)
  t.equal(coded.body, body)
  const head = await fastify.inject({ method: 'HEAD', url: '/hit' })
  t.equal(head.statusCode, 200)
  t.equal(head.body, '')
  t.equal(head.headers['content-length'], String(body.length))
  t.equal(head.headers.etag, rendered.etag)
  t.same(head.headers['set-cookie'], ['a=1', 'b=2'])
  const notModified = await fastify.inject({ method: 'GET', url: '/hit', headers: { 'if-none-match': rendered.etag } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, rendered.etag)
})

t.test('reply.sendRendered compresses from 1 KB: br or gzip as accepted, the ETag of the uncompressed body, copies kept', async t => {
  const { fastify } = await bare(t)
  const body = JSON.stringify({ items: Array.from({ length: 40 }, (_, i) => ({ _slug: `entry-${i}`, title: `Entry ${i}` })) })
  const kept = { body: Buffer.from(body), etag: etagOf(body) }
  let released = 0
  const pooled = { body: Buffer.from(body), etag: etagOf(body), release: () => { released++ } }
  const small = { body: Buffer.from('{"a":1}'), etag: etagOf('{"a":1}') }
  fastify.get('/kept', async (_request, reply) => reply.sendRendered(kept))
  fastify.get('/stored', async (_request, reply) => reply.sendRendered({ body: kept.body, etag: kept.etag }))
  fastify.get('/pooled', async (_request, reply) => reply.sendRendered(pooled))
  fastify.get('/small', async (_request, reply) => reply.sendRendered(small))

  for (const [accept, encoding] of [['gzip, deflate, br', 'br'], ['gzip', 'gzip'], [undefined, undefined]] as const) {
    const res = await fastify.inject({ url: '/kept', headers: accept === undefined ? {} : { 'accept-encoding': accept } })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], encoding, `${String(accept)}: ${String(encoding)}`)
    t.equal(res.headers.vary, 'accept-encoding')
    t.equal(res.headers.etag, kept.etag, 'the ETag of the uncompressed body')
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.headers['content-length'], String(res.rawPayload.length))
    const bytes = encoding === 'br' ? brotliDecompressSync(res.rawPayload) : encoding === 'gzip' ? gunzipSync(res.rawPayload) : res.rawPayload
    t.equal(bytes.toString(), body)
    if (encoding !== undefined) t.same(fastify.compressedCopies.kept(kept.body, encoding), res.rawPayload, `${encoding}: the bytes sent are the copy kept with the answer`)
  }

  // The response cache keeps an answer in a record of its own, with the same body: a hit sends
  // the copy the first answer made.
  const sent = fastify.compressedCopies.kept(kept.body, 'br')
  const stored = await fastify.inject({ url: '/stored', headers: { 'accept-encoding': 'br' } })
  t.same(stored.rawPayload, sent)
  t.equal(fastify.compressedCopies.kept(kept.body, 'br'), sent, 'the same copy, not a new one')

  // A tag given out with one encoding matches in another: 304, with the Vary, without a body.
  const notModified = await fastify.inject({ url: '/kept', headers: { 'accept-encoding': 'gzip', 'if-none-match': kept.etag } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers['content-encoding'], undefined)
  t.equal(notModified.headers.vary, 'accept-encoding')

  const head = await fastify.inject({ method: 'HEAD', url: '/kept', headers: { 'accept-encoding': 'br' } })
  t.equal(head.body, '')
  t.equal(head.headers['content-encoding'], 'br')
  t.equal(head.headers['content-length'], String(fastify.compressedCopies.kept(kept.body, 'br')?.length))

  const fromPool = await fastify.inject({ url: '/pooled', headers: { 'accept-encoding': 'br' } })
  t.equal(brotliDecompressSync(fromPool.rawPayload).toString(), body)
  t.equal(fastify.compressedCopies.kept(pooled.body, 'br'), undefined, 'a pooled body is sent once: no copy is kept')
  t.equal(released, 1, 'its memory is released once sent')

  const smallRes = await fastify.inject({ url: '/small', headers: { 'accept-encoding': 'br' } })
  t.equal(smallRes.headers['content-encoding'], undefined, 'under 1 KB: as it is')
  t.equal(smallRes.headers.vary, undefined)
  t.equal(smallRes.body, '{"a":1}')
})

t.test('reply.sendRendered with CMS_COMPRESSION=false: as rendered, no Vary', async t => {
  const { fastify } = await bare(t, { CMS_COMPRESSION: 'false' })
  const body = 'x'.repeat(5000)
  const rendered = { body: Buffer.from(body), etag: etagOf(body) }
  fastify.get('/r', async (_request, reply) => reply.sendRendered(rendered))
  const res = await fastify.inject({ url: '/r', headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(res.headers['content-encoding'], undefined)
  t.equal(res.headers.vary, undefined)
  t.equal(res.body, body)
})

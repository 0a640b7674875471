// The cache plugin on a bare instance, with the content plugin it is handed to over stand-ins.
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import compressionPlugin from '../../plugins/compression.js'
import configPlugin from '../../plugins/config.js'
import eventsPlugin from '../../plugins/events.js'
import localesPlugin from '../../plugins/locales.js'
import contentPlugin from '../../plugins/content.js'
import cachePlugin from '../../plugins/cache.js'
import { ResponseCache } from '../../lib/cache.js'
import type { SchemaRegistry } from '../../types/schema.js'
import { MemoryStore, fakeRegistry, postsModel, referenceService } from '../fixtures/content-fakes.js'
import { tempDir, testConfig, type Env } from '../helper.js'

const admin = { role: 'admin' as const, authenticated: true, invalidKey: false }

async function bare (t: Test, env: Env = {}): Promise<{ fastify: FastifyInstance, store: MemoryStore }> {
  const config = testConfig(tempDir(t), { CMS_ENVIRONMENTS: 'main,staging', ...env })
  const fastify = Fastify()
  const store = new MemoryStore()
  await fastify.register(configPlugin, { config })
  await fastify.register(compressionPlugin)
  await fastify.register(eventsPlugin)
  await fastify.register(localesPlugin)
  const registry = fakeRegistry([postsModel()])
  await fastify.register(fp(async f => { f.decorate('schemas', registry as SchemaRegistry) }, { name: 'schemas' }))
  await fastify.register(fp(async f => { f.decorate('store', store) }, { name: 'store' }))
  await fastify.register(fp(async f => { f.decorate('references', referenceService(registry, store)) }, { name: 'references' }))
  await fastify.register(cachePlugin)
  await fastify.register(contentPlugin)
  await fastify.ready()
  t.teardown(async () => { await fastify.close() })
  return { fastify, store }
}

const reads = (store: MemoryStore): number => store.calls.filter(c => c.startsWith('get ')).length

t.test('decorates responseCache, which content reads use', async t => {
  const { fastify, store } = await bare(t)
  t.ok(fastify.responseCache instanceof ResponseCache)
  const scope = fastify.scopeOf({})
  await fastify.content.create(scope, 'posts', { _slug: 'a', title: 'A' })
  const first = await fastify.content.get(scope, 'posts', 'a', admin)
  t.equal(fastify.responseCache.size, 1)
  const n = reads(store)
  const second = await fastify.content.get(scope, 'posts', 'a', admin)
  t.equal(reads(store), n, 'the second read is a hit')
  t.equal(second.etag, first.etag)
  t.equal(String(second.body), String(first.body))
  t.ok(Buffer.isBuffer(second.body), 'a hit answers the kept bytes')
})

t.test('a durable write to a collection discards its responses, in its environment only', async t => {
  const { fastify, store } = await bare(t)
  const main = fastify.scopeOf({ _environment: 'main' })
  const staging = fastify.scopeOf({ _environment: 'staging' })
  await fastify.content.create(main, 'posts', { _slug: 'a', title: 'A' })
  await fastify.content.create(staging, 'posts', { _slug: 'a', title: 'S' })
  await fastify.content.get(main, 'posts', 'a', admin)
  await fastify.content.get(staging, 'posts', 'a', admin)
  await fastify.content.list(main, 'posts', {}, '', admin)
  t.equal(fastify.responseCache.size, 3)
  await fastify.content.update(staging, 'posts', 'a', { title: 'S2' })
  t.equal(fastify.responseCache.size, 2, 'the staging entry went')
  const n = reads(store)
  await fastify.content.get(main, 'posts', 'a', admin)
  t.equal(reads(store), n, 'main still cached')
  t.match(String((await fastify.content.get(staging, 'posts', 'a', admin)).body), /S2/)
  await fastify.content.remove(main, 'posts', 'a')
  t.equal(fastify.responseCache.size, 1, 'a delete discards too')
})

t.test('schema events clear the cache', async t => {
  const { fastify } = await bare(t)
  const scope = fastify.scopeOf({})
  await fastify.content.create(scope, 'posts', { _slug: 'a', title: 'A' })
  await fastify.content.get(scope, 'posts', 'a', admin)
  t.equal(fastify.responseCache.size, 1)
  fastify.events.emit({ event: 'schema.updated', name: 'other' })
  t.equal(fastify.responseCache.size, 0)
})

t.test('CMS_CACHE_MAX=0: a cache that keeps nothing', async t => {
  const { fastify, store } = await bare(t, { CMS_CACHE_MAX: '0' })
  t.notOk(fastify.responseCache.enabled)
  const scope = fastify.scopeOf({})
  await fastify.content.create(scope, 'posts', { _slug: 'a', title: 'A' })
  const n = reads(store)
  await fastify.content.get(scope, 'posts', 'a', admin)
  await fastify.content.get(scope, 'posts', 'a', admin)
  t.equal(reads(store), n + 2)
  t.equal(fastify.responseCache.size, 0)
})

t.test('loads without the content plugin: content is handed the cache, not the other way round', async t => {
  const fastify = Fastify()
  t.teardown(async () => { await fastify.close() })
  await fastify.register(configPlugin, { config: testConfig(tempDir(t)) })
  await fastify.register(eventsPlugin)
  await fastify.register(cachePlugin)
  await fastify.ready()
  t.ok(fastify.responseCache.enabled)
})

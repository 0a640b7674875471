// The response cache (CMS_CACHE_MAX; 0 turns it off): rendered list and entry responses kept
// with their bytes and ETag (lib/cache.ts). The content pipeline is handed it (plugins/content.ts):
// a write discards every response that depends on the written collection (its own lists and
// entries, and `_resolve` answers that looked into it) once the write is durable. A schema
// change discards everything.
import fp from 'fastify-plugin'
import { ResponseCache } from '../lib/cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The response cache of content reads. */
    responseCache: ResponseCache
  }
}

export default fp(async (fastify) => {
  const cache = new ResponseCache({ max: fastify.config.cacheMax })
  fastify.decorate('responseCache', cache)
  if (!cache.enabled) return

  // Models (field order, reference fields, the collection itself) change with schemas.
  const unsubscribe = fastify.events.on(event => {
    if (event.event.startsWith('schema.')) cache.clear()
  })
  fastify.addHook('onClose', async () => { unsubscribe() })
}, { name: 'cache', dependencies: ['config', 'events'], fastify: '5.x' })

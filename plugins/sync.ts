// The change feed, GET /api/sync (contract §9): lib/sync/service.ts over the store's change log,
// with the data dir's sync key (lib/sync/secret.ts) signing its cursors.
import fp from 'fastify-plugin'
import { loadSyncSecret } from '../lib/sync/secret.js'
import { SyncService } from '../lib/sync/service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change feed: `read(query, caller context)` answers one page of GET /api/sync as JSON text. */
    sync: SyncService
  }
}

export default fp(async (fastify) => {
  const secret = await loadSyncSecret(fastify.config.dataDir)
  fastify.decorate('sync', new SyncService({
    store: fastify.store,
    registry: fastify.schemas,
    entryJson: (model, entry) => fastify.content.entryJson(model, entry),
    secret
  }))
}, { name: 'sync', dependencies: ['config', 'data', 'store', 'schemas', 'content'], fastify: '5.x' })

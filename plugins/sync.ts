// The change feed, GET /api/sync (contract §9): lib/sync/service.ts over the store's change log,
// with the sync key (lib/sync/secret.ts) signing its cursors: the data dir's, or with PostgreSQL
// the schema's, so that every replica accepts every other's cursors.
import fp from 'fastify-plugin'
import { PostgresStore } from '../lib/store/postgres.js'
import { loadSharedSyncSecret, loadSyncSecret } from '../lib/sync/secret.js'
import { DEFAULT_KEPT_CHARS, SyncService } from '../lib/sync/service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change feed: `read(query, caller context)` answers one page of GET /api/sync as JSON (UTF-8 bytes, maybe pooled). */
    sync: SyncService
  }
}

export default fp(async (fastify) => {
  const { store } = fastify
  const secret = store instanceof PostgresStore ? await loadSharedSyncSecret(store) : await loadSyncSecret(fastify.config.dataDir)
  fastify.decorate('sync', new SyncService({
    store,
    registry: fastify.schemas,
    entryText: (model, entry) => fastify.content.entryText(model, entry),
    secret,
    // Kept answers are cached answers: none when the response cache is off (CMS_CACHE_MAX or
    // CMS_CACHE_MAX_BYTES 0, as `lectern --data-dir` runs), else an eighth of its byte budget.
    keptChars: fastify.config.cacheMax === 0 ? 0 : Math.min(DEFAULT_KEPT_CHARS, Math.floor(fastify.config.cacheMaxBytes / 8)),
    // The list answers' pool: an answer sent once is written into memory already mapped.
    bodies: fastify.content.bodies
  }))
}, { name: 'sync', dependencies: ['config', 'data', 'store', 'schemas', 'content'], fastify: '5.x' })

// The content store (CMS_STORE; CMS_DATABASE_URL and CMS_DATABASE_POOL for PostgreSQL), with its
// change log (CMS_SYNC_RETENTION_DAYS): opened at registration, closed on close. Collections get
// their storage location when a schema is created (interface.md Schemas rule 8) and their indexes
// from every resolved schema: at start and after each schema create or update.
import fp from 'fastify-plugin'
import { createStore } from '../lib/store/index.js'
import type { SchemaEvent } from '../types/events.js'
import type { ContentStore } from '../types/store.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The content store chosen by CMS_STORE (types/store.ts). */
    store: ContentStore
  }
}

export default fp(async (fastify) => {
  const { config } = fastify
  const store = createStore(config.store, {
    dataDir: config.dataDir,
    environments: config.environments,
    locales: config.locales,
    syncRetentionDays: config.syncRetentionDays,
    entryCacheBytes: config.entryCacheBytes,
    databaseUrl: config.databaseUrl ?? undefined,
    databasePool: config.databasePool,
    origin: fastify.cluster.origin,
    log: fastify.log.child({ component: 'store' })
  })
  await store.open()
  fastify.decorate('store', store)

  // Every collection, not only the one written: a change to a parent schema changes its children.
  // Unchanged collections cost one catalogue lookup. Without the registry there is nothing to do.
  const prepareAll = async (): Promise<void> => {
    if (!fastify.hasDecorator('schemas')) return
    for (const model of fastify.schemas.collections()) await store.prepareCollection(model.schema)
  }

  const unsubscribe = fastify.events.on(async (event) => {
    if (event.event !== 'schema.created' && event.event !== 'schema.updated') return
    if (event.event === 'schema.created') await store.ensureCollection((event as SchemaEvent).name)
    await prepareAll()
  })

  // The registry may register after this plugin: prepare once every plugin is loaded.
  fastify.addHook('onReady', async () => { await prepareAll() })

  fastify.addHook('onClose', async () => {
    unsubscribe()
    // A collection's folders may still be in the making for a schema created just before.
    await fastify.events.settled()
    await store.close()
  })
}, { name: 'store', dependencies: ['config', 'events', 'data', 'cluster'], fastify: '5.x' })

// The asset library (contract §7): metadata repository, uploads, lookups, deletes, events.
import fp from 'fastify-plugin'
import { AssetLibrary } from '../lib/assets/library.js'
import { AssetRoots } from '../lib/assets/paths.js'
import { createAssetRepository } from '../lib/assets/repository.js'
import { PostgresStore } from '../lib/store/postgres.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Uploads, lists, locates and deletes assets per environment; emits asset.* events. */
    assets: AssetLibrary
  }
}

export default fp(async (fastify) => {
  const { config, store } = fastify
  const library = new AssetLibrary({
    // With PostgreSQL the records live in the database, on the store's pool (contract §12).
    repository: createAssetRepository(config.store, { dataDir: config.dataDir, ...(store instanceof PostgresStore ? { database: store } : {}) }),
    roots: new AssetRoots(config.assetsDir, config.environments),
    publicUrl: config.publicUrl,
    environments: config.environments,
    uploadLimit: config.uploadLimit,
    emit: event => { fastify.events.emit(event) },
    log: fastify.log,
    sharedFiles: config.store === 'postgres'
  })
  await library.open()
  fastify.decorate('assets', library)
  fastify.addHook('onClose', async () => { await library.close() })
}, { name: 'assets', dependencies: ['config', 'data', 'events', 'store'], fastify: '5.x' })

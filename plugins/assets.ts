// The asset library (contract §7): metadata repository, uploads, lookups, deletes, events.
import fp from 'fastify-plugin'
import { AssetLibrary } from '../lib/assets/library.js'
import { AssetRoots } from '../lib/assets/paths.js'
import { createAssetRepository } from '../lib/assets/repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Uploads, lists, locates and deletes assets per environment; emits asset.* events. */
    assets: AssetLibrary
  }
}

export default fp(async (fastify) => {
  const { config } = fastify
  const library = new AssetLibrary({
    repository: createAssetRepository(config.store, { dataDir: config.dataDir }),
    roots: new AssetRoots(config.assetsDir, config.environments),
    publicUrl: config.publicUrl,
    environments: config.environments,
    uploadLimit: config.uploadLimit,
    emit: event => { fastify.events.emit(event) },
    log: fastify.log
  })
  await library.open()
  fastify.decorate('assets', library)
  fastify.addHook('onClose', async () => { await library.close() })
}, { name: 'assets', dependencies: ['config', 'data', 'events'], fastify: '5.x' })

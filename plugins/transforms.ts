// Image transforms (contract §7): the on-disk variant cache, computed with sharp.
import os from 'node:os'
import path from 'node:path'
import fp from 'fastify-plugin'
import { TransformService } from '../lib/assets/transforms.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolves, computes (once) and serves image variants; flushes them. */
    transforms: TransformService
  }
}

export default fp(async (fastify) => {
  const service = new TransformService({
    library: fastify.assets,
    cacheDir: path.join(fastify.config.dataDir, 'cache', 'transforms'),
    // One libvips thread per image and one image per core: a 2-core box encodes two at a time
    // and keeps threadpool slots free for file I/O.
    concurrency: Math.max(1, Math.min(os.availableParallelism(), 4)),
    log: fastify.log
  })
  await service.open()
  // Deleting an asset drops its variants.
  fastify.assets.onRemove(async (environment, relative) => await service.invalidateAsset(environment, relative))
  fastify.decorate('transforms', service)
  fastify.addHook('onClose', async () => { await service.close() })
}, { name: 'transforms', dependencies: ['config', 'assets'], fastify: '5.x' })

// POST /api/transform/cache/invalidate (contract §7).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { invalidateSchema } from './schemas.js'

const invalidate: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post('/', {
    schema: invalidateSchema,
    // No body at all means the same as {}: flush everything.
    preValidation: async (request) => { request.body ??= {} },
    preHandler: fastify.requirePermission('AssetsWrite')
  }, async (request) => {
    const { path } = request.body
    const removed = path === undefined
      ? await fastify.transforms.invalidateAll()
      : await fastify.transforms.invalidatePath(fastify.scopeOf(request.query).environment, path)
    return { removed }
  })
}

export default invalidate

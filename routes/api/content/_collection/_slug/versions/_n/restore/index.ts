import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { restoreSchema } from '../schemas.js'

const restoreRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const contentWrite = fastify.requirePermission('ContentWrite')

  fastify.post('/', { schema: restoreSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug, n } = request.params
    const written = await fastify.content.restore(fastify.scopeOf(request.query), collection, slug, n)
    return reply.sendJson(written.body)
  })
}

export default restoreRoutes

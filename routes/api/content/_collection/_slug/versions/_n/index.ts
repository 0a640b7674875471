import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { versionSchema } from './schemas.js'

const versionRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // Contract §13: any valid key may read; without one, 401 (not the anonymous view).
  const anyKey = fastify.requireRole('admin', 'editor', 'viewer')

  fastify.get('/', { schema: versionSchema, onRequest: anyKey }, async (request, reply) => {
    const { collection, slug, n } = request.params
    return reply.sendJson(await fastify.content.version(fastify.scopeOf(request.query), collection, slug, n))
  })
}

export default versionRoutes

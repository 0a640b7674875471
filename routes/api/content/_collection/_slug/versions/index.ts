import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { versionsSchema } from './schemas.js'

const versionsRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // Contract §13: any valid key may read; without one, 401 (not the anonymous view).
  const anyKey = fastify.requireRole('admin', 'editor', 'viewer')

  fastify.get('/', { schema: versionsSchema, onRequest: anyKey }, async (request) => {
    const { collection, slug } = request.params
    return await fastify.content.versions(fastify.scopeOf(request.query), collection, slug, request.query)
  })
}

export default versionsRoutes

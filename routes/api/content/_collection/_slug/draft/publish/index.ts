import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { publishDraftSchema } from '../schemas.js'

const publishDraftRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  const contentWrite = fastify.requirePermission('ContentWrite')

  fastify.post('/', { schema: publishDraftSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug } = request.params
    const written = await fastify.content.publishDraft(fastify.scopeOf(request.query), collection, slug)
    return reply.sendJson(written.body)
  })
}

export default publishDraftRoutes

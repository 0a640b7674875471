import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { deleteDraftSchema, getDraftSchema, putDraftSchema } from './schemas.js'

const draftRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // Contract §13: writes need ContentWrite (checked before the body is read); reads any valid key.
  const contentWrite = fastify.requirePermission('ContentWrite')
  const anyKey = fastify.requireRole('admin', 'editor', 'viewer')

  fastify.put('/', { schema: putDraftSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug } = request.params
    return reply.sendJson(await fastify.content.putDraft(fastify.scopeOf(request.query), collection, slug, request.body))
  })

  fastify.get('/', { schema: getDraftSchema, onRequest: anyKey }, async (request, reply) => {
    const { collection, slug } = request.params
    return reply.sendJson(await fastify.content.getDraft(fastify.scopeOf(request.query), collection, slug))
  })

  fastify.delete('/', { schema: deleteDraftSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug } = request.params
    await fastify.content.deleteDraft(fastify.scopeOf(request.query), collection, slug)
    reply.code(204)
    return null
  })
}

export default draftRoutes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { deleteSchema, getSchema, patchSchema, putSchema } from './schemas.js'

const entryRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // Writes check the permission in onRequest, before the body is read (update and delete rule 1).
  const contentWrite = fastify.requirePermission('ContentWrite')

  // A cached answer goes out first thing, before the query is validated (see content.cachedEntry).
  const cachedEntry = fastify.cachedReply(request => {
    const query = request.query as Record<string, unknown>
    const { collection, slug } = request.params as { collection: string, slug: string }
    return fastify.content.cachedEntry(fastify.scopeOf(query), collection, slug, request.caller, query)
  })

  fastify.get('/', { schema: getSchema, onRequest: cachedEntry }, async (request, reply) => {
    const { collection, slug } = request.params
    return reply.sendRendered(await fastify.content.get(fastify.scopeOf(request.query), collection, slug, request.caller, request.query))
  })

  fastify.put('/', { schema: putSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug } = request.params
    const written = await fastify.content.update(fastify.scopeOf(request.query), collection, slug, request.body)
    return reply.sendJson(written.body)
  })

  fastify.patch('/', { schema: patchSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug } = request.params
    const written = await fastify.content.patch(fastify.scopeOf(request.query), collection, slug, request.body)
    return reply.sendJson(written.body)
  })

  fastify.delete('/', { schema: deleteSchema, onRequest: contentWrite }, async (request, reply) => {
    const { collection, slug } = request.params
    await fastify.content.remove(fastify.scopeOf(request.query), collection, slug)
    reply.code(204)
    return null
  })
}

export default entryRoutes

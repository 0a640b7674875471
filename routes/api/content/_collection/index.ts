import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createSchema, listSchema } from './schemas.js'

const collectionRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // A cached answer goes out first thing, before the query is validated (see content.cachedList).
  const cachedList = fastify.cachedReply(request =>
    fastify.content.cachedList(fastify.scopeOf(request.query as Record<string, unknown>), (request.params as { collection: string }).collection, request.queryString, request.caller))

  fastify.get('/', { schema: listSchema, onRequest: cachedList }, async (request, reply) => {
    const scope = fastify.scopeOf(request.query)
    return reply.sendRendered(await fastify.content.list(scope, request.params.collection, request.query, request.queryString, request.caller))
  })

  // The permission is checked in onRequest, before the body is even read: create rule 1 comes first.
  fastify.post('/', { schema: createSchema, onRequest: fastify.requirePermission('ContentWrite') }, async (request, reply) => {
    const scope = fastify.scopeOf(request.query)
    const written = await fastify.content.create(scope, request.params.collection, request.body)
    return reply.code(201).sendJson(written.body)
  })
}

export default collectionRoutes

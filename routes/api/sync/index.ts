import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { syncSchema } from './schemas.js'

const syncRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: syncSchema }, async (request, reply) => {
    const answer = await fastify.sync.read(request.query, request.caller, fastify.scopeOf)
    return reply.header('cache-control', 'no-store').sendJson(answer.body, answer.release)
  })
}

export default syncRoutes

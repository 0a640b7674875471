import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createSchema } from './schemas.js'

const scheduleRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // The permission is checked in onRequest, before the body is read (as every content write).
  fastify.post('/', { schema: createSchema, onRequest: fastify.requirePermission('ContentWrite') }, async (request, reply) => {
    const { collection, slug } = request.params
    const schedule = await fastify.schedules.create(fastify.scopeOf(request.query), collection, slug, request.body)
    reply.code(201)
    return schedule
  })
}

export default scheduleRoutes

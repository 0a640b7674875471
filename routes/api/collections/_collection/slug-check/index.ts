import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { slugCheckSchema } from './schemas.js'

const slugCheckRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: slugCheckSchema }, async (request) => {
    const { slug, exclude } = request.query
    return await fastify.content.slugCheck(fastify.scopeOf(request.query), request.params.collection, slug, exclude)
  })
}

export default slugCheckRoutes

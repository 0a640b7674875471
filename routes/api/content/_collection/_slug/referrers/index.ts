import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { referrersSchema } from './schemas.js'

const referrersRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: referrersSchema }, async (request) => {
    const { collection, slug } = request.params
    return await fastify.references.referrers(collection, slug)
  })
}

export default referrersRoutes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { rawSchemaSchema } from './schemas.js'

const raw: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: rawSchemaSchema }, async (request) => fastify.schemas.readRaw(request.params.name))
}

export default raw

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { deleteSchemaSchema, updateSchemaSchema } from './schemas.js'

const schema: FastifyPluginAsyncTypebox = async (fastify) => {
  const guard = fastify.requirePermission('SchemasWrite')

  // As for POST: the registry's check decides about the body, not the documenting schema.
  fastify.put('/', { schema: updateSchemaSchema, attachValidation: true, onRequest: guard }, async (request) => {
    const definition = await fastify.schemas.update(request.params.name, request.body)
    fastify.events.emit({ event: 'schema.updated', name: definition.name })
    return definition
  })

  fastify.delete('/', { schema: deleteSchemaSchema, onRequest: guard }, async (request, reply) => {
    await fastify.schemas.remove(request.params.name)
    fastify.events.emit({ event: 'schema.deleted', name: request.params.name })
    reply.code(204)
    return null
  })
}

export default schema

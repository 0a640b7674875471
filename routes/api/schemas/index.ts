import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createSchemaSchema, listSchemasSchema } from './schemas.js'

const schemas: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: listSchemasSchema }, async () => ({ names: fastify.schemas.names() }))

  // The permission is checked in onRequest, before the body is read: rule 1 comes first.
  fastify.post('/', { schema: createSchemaSchema, onRequest: fastify.requirePermission('SchemasWrite') }, async (request, reply) => {
    const definition = await fastify.schemas.create(request.body)
    fastify.events.emit({ event: 'schema.created', name: definition.name })
    reply.code(201)
    return definition
  })
}

export default schemas

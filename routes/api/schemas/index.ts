import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { createSchemaSchema, listSchemasSchema } from './schemas.js'

const schemas: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: listSchemasSchema }, async () => ({ names: fastify.schemas.names() }))

  // The permission is checked in onRequest, before the body is read: rule 1 comes first. The body
  // schema documents the definition; the registry's own check decides (attachValidation), so a
  // bad name is a 400 and an attribute of the wrong type a 422 naming it (contract §5).
  fastify.post('/', { schema: createSchemaSchema, attachValidation: true, onRequest: fastify.requirePermission('SchemasWrite') }, async (request, reply) => {
    const definition = await fastify.schemas.create(request.body)
    fastify.events.emit({ event: 'schema.created', name: definition.name })
    reply.code(201)
    return definition
  })
}

export default schemas

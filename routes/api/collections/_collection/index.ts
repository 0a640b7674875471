import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import { notFound } from '../../../../lib/errors.js'
import { getCollectionSchema, type ResolvedSchemaReply } from './schemas.js'

const collection: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: getCollectionSchema }, async (request): Promise<Static<typeof ResolvedSchemaReply>> => {
    const model = fastify.schemas.collection(request.params.collection)
    if (model === null) throw notFound(`Collection '${request.params.collection}' not found.`)
    const { schema } = model
    return {
      name: schema.name,
      label: schema.label ?? null,
      description: schema.description ?? null,
      extends: schema.extends,
      reusable: schema.reusable,
      strict: schema.strict,
      tags: schema.tags ?? [],
      category: schema.category ?? null,
      default_sort: schema.default_sort ?? null,
      default_order: schema.default_order ?? null,
      display_field: schema.display_field ?? null,
      fields: schema.fields
    }
  })
}

export default collection

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { listCollectionsSchema, type CollectionSummary } from './schemas.js'

const collections: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', { schema: listCollectionsSchema }, async () => ({
    collections: fastify.schemas.collections().map(({ schema }): CollectionSummary => ({
      name: schema.name,
      label: schema.label ?? schema.name,
      field_count: Object.keys(schema.fields).length,
      extends: schema.extends,
      strict: schema.strict,
      description: schema.description ?? null,
      tags: schema.tags ?? [],
      category: schema.category ?? null
    }))
  }))
}

export default collections

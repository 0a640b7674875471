import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../types/errors.js'

const NullableString = Type.Union([Type.String(), Type.Null()])

/** interface.md "Collection summary". */
export const CollectionSummary = Type.Object({
  name: Type.String({ description: 'The collection (schema) name' }),
  label: Type.String({ description: "The schema's label, or its name when it has none (an extension of interface.md's summary, for the admin's sidebar)" }),
  field_count: Type.Integer({ minimum: 0, description: 'Number of top-level fields, inherited ones included' }),
  extends: Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()], { description: 'Parent schema name(s), as in the schema' }),
  strict: Type.Boolean({ description: 'Unknown fields are rejected (the schema or a parent is strict)' }),
  description: NullableString,
  tags: Type.Array(Type.String()),
  category: NullableString
}, { additionalProperties: false })
export type CollectionSummary = Static<typeof CollectionSummary>

export const CollectionsReply = Type.Object({
  collections: Type.Array(CollectionSummary)
}, { additionalProperties: false })

export const listCollectionsSchema = {
  tags: ['discovery'],
  summary: 'List the content collections',
  description: 'One summary per non-reusable schema that resolves, sorted by name. Reusable partials are left out.',
  response: { 200: CollectionsReply, ...errorResponses(500) }
}

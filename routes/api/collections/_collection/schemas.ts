import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../types/errors.js'
import { CollectionParams } from '../../../../types/content.js'
import { FIELD_TYPES } from '../../../../types/schema.js'

const NullableString = Type.Union([Type.String(), Type.Null()])

/** A field definition of contract §5. Nested `fields` / `items` hold field definitions of the same shape. */
export const FieldDefinitionReply = Type.Object({
  field_type: Type.Union(FIELD_TYPES.map(t => Type.Literal(t))),
  required: Type.Optional(Type.Boolean()),
  default: Type.Optional(Type.Unknown()),
  auto: Type.Optional(Type.Union([Type.Literal('uuid'), Type.Literal('now')])),
  readonly: Type.Optional(Type.Boolean()),
  unique: Type.Optional(Type.Boolean()),
  label: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  min_length: Type.Optional(Type.Integer({ minimum: 0 })),
  max_length: Type.Optional(Type.Integer({ minimum: 0 })),
  pattern: Type.Optional(Type.String()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  options: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]))),
  min_items: Type.Optional(Type.Integer({ minimum: 0 })),
  max_items: Type.Optional(Type.Integer({ minimum: 0 })),
  collection: Type.Optional(Type.String()),
  multiple: Type.Optional(Type.Boolean()),
  accept: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  fields: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Nested field definitions (object)' })),
  items: Type.Optional(Type.Unknown({ description: 'The field definition of each item (array)' }))
}, { additionalProperties: false })

/** A schema with `extends` applied: parent fields first, strict when any ancestor is, every property present. */
export const ResolvedSchemaReply = Type.Object({
  name: Type.String(),
  label: NullableString,
  description: NullableString,
  extends: Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()], { description: 'As written in the schema (unresolved)' }),
  reusable: Type.Boolean(),
  strict: Type.Boolean(),
  tags: Type.Array(Type.String()),
  category: NullableString,
  default_sort: NullableString,
  default_order: Type.Union([Type.Literal('asc'), Type.Literal('desc'), Type.Null()], { description: 'null means desc' }),
  display_field: NullableString,
  fields: Type.Record(Type.String(), FieldDefinitionReply)
}, { additionalProperties: false })

export const getCollectionSchema = {
  tags: ['discovery'],
  summary: 'Get a collection\'s resolved schema',
  description: 'The schema with `extends` applied. A schema in JSON Schema notation comes back converted to the native field model. Unknown, reusable or unresolvable: 404.',
  params: CollectionParams,
  response: { 200: ResolvedSchemaReply, ...errorResponses(404, 500) }
}

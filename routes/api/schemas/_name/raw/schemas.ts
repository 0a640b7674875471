import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../../types/errors.js'
import { SchemaNameParams } from '../schemas.js'

/** Whatever the file holds: a native definition, or a JSON Schema (draft-07) document. */
export const RawSchemaReply = Type.Object({}, {
  additionalProperties: true,
  description: 'The schema file as stored on disk: own fields and `extends`, unresolved, in the notation it was written in'
})

export const rawSchemaSchema = {
  tags: ['schemas'],
  summary: 'Get a schema as stored',
  description: '`<name>.json5` when it exists, else `<name>.json`. Neither: 404. Unparsable, or its `name` differs from the path: 400.',
  params: SchemaNameParams,
  response: { 200: RawSchemaReply, ...errorResponses(400, 404, 500) }
}

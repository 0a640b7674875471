import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../../types/errors.js'
import { SchemaDefinitionBody, WRITE_SECURITY } from '../schemas.js'

export const SchemaNameParams = Type.Object({
  name: Type.String({ description: 'A schema name: lowercase letters, digits and underscores, 1 to 64 characters' })
})

export const updateSchemaSchema = {
  tags: ['schemas'],
  summary: 'Replace a schema',
  description: 'Rewrites the existing file (`<name>.json5` when it exists, else `<name>.json`) as pretty-printed JSON and emits ' +
    '`schema.updated`. The path name must equal the body\'s `name` (400); no file: 404; invalid fields, unknown parent or cycle: 422.',
  security: WRITE_SECURITY,
  params: SchemaNameParams,
  body: SchemaDefinitionBody,
  response: { 200: SchemaDefinitionBody, ...errorResponses(400, 401, 403, 404, 413, 415, 422, 500) }
}

export const deleteSchemaSchema = {
  tags: ['schemas'],
  summary: 'Delete a schema',
  description: 'Removes both `<name>.json5` and `<name>.json` and emits `schema.deleted`. Entries of the collection are kept in storage.',
  security: WRITE_SECURITY,
  params: SchemaNameParams,
  response: { 204: Type.Null({ description: 'No body' }), ...errorResponses(400, 401, 403, 404, 500) }
}

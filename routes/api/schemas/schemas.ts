import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../types/errors.js'
import { SchemaDefinitionSchema } from '../../../types/schema.js'

export const SchemaNamesReply = Type.Object({
  names: Type.Array(Type.String(), { description: 'Every schema in the types directory, reusable ones included, sorted' })
}, { additionalProperties: false })

/** The body of POST and PUT, and their answer: a schema definition in native notation. */
export const SchemaDefinitionBody = SchemaDefinitionSchema

export const WRITE_SECURITY: Array<Record<string, string[]>> = [{ bearer: [] }, { apiKey: [] }]

export const listSchemasSchema = {
  tags: ['schemas'],
  summary: 'List schema names',
  response: { 200: SchemaNamesReply, ...errorResponses(500) }
}

export const createSchemaSchema = {
  tags: ['schemas'],
  summary: 'Create a schema',
  description: 'Writes `<name>.json` (pretty-printed, atomically) into the types directory and emits `schema.created`. ' +
    'Requires the SchemasWrite permission when API keys are enabled. Bad name or `reusable: true`: 400; ' +
    'an existing schema of that name: 409; invalid fields, unknown parent or cycle: 422 with one message per problem.',
  security: WRITE_SECURITY,
  body: SchemaDefinitionBody,
  response: { 201: SchemaDefinitionBody, ...errorResponses(400, 401, 403, 409, 413, 415, 422, 500) }
}

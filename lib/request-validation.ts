// How request parts are checked against their route's schema. Fastify's default compiler coerces
// types in every part: right for the query string, path and headers, whose values are all
// strings, but wrong for a JSON body, where `"strict": "true"` or `"_slug": 5` must be refused as
// sent rather than quietly turned into `true` and `"5"` (contract §5: an attribute of the wrong
// type is a validation failure). So a body is checked exactly, and the other parts as Fastify
// would. Installed with the documented `setValidatorCompiler`.
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import formats from 'ajv-formats'

/** Fastify's defaults, except that unknown properties are kept (the routes decide about them). */
const COMMON: Options = { removeAdditional: false, useDefaults: true, allErrors: false, addUsedSchema: false }

export interface ValidatorRequest {
  schema: object
  httpPart?: string
}

/** A validator compiler for `setValidatorCompiler`: exact for bodies, coercing for the other parts. */
export function requestValidatorCompiler (): (request: ValidatorRequest) => ValidateFunction {
  const exact = withFormats(new Ajv({ ...COMMON, coerceTypes: false }))
  const coercing = withFormats(new Ajv({ ...COMMON, coerceTypes: 'array' }))
  return ({ schema, httpPart }) => (httpPart === 'body' ? exact : coercing).compile(schema)
}

function withFormats (ajv: Ajv): Ajv {
  formats.default(ajv)
  return ajv
}

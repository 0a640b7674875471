// The finishing of the OpenAPI document (contract §15). `finishDocument` runs once on what
// @fastify/swagger builds from the routes; `withCollections` adds, on every schema change, the
// concrete paths and component schemas of each collection, derived from the generic content
// operations so that they answer with the same statuses and headers.
import type { ResolvedSchema } from '../../types/schema.js'
import { ERROR_KINDS } from '../errors.js'
import { collectionComponents, componentName, ref, type JsonSchema, type Shape } from './fields.js'
import { declareHeaders, type HeaderOptions } from './headers.js'
import { operationId } from './routes.js'

export interface OpenApiDocument {
  openapi: string
  info: Record<string, unknown>
  paths: Record<string, Record<string, Operation>>
  components: { schemas?: Record<string, JsonSchema>, securitySchemes?: Record<string, unknown> }
  [key: string]: unknown
}

export interface Operation {
  operationId?: string
  summary?: string
  parameters?: Array<{ name: string, in: string }>
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses?: Record<string, ResponseObject>
  [key: string]: unknown
}

export interface ResponseObject {
  description?: string
  content?: Record<string, { schema: JsonSchema }>
  headers?: Record<string, unknown>
  [key: string]: unknown
}

export interface FinishOptions extends HeaderOptions {
  keysEnabled: boolean
}

/** The generic content paths, each collection's concrete paths are derived from. */
export const LIST_PATH = '/api/content/{collection}'
export const ENTRY_PATH = '/api/content/{collection}/{slug}'

/** What a concrete operation's 200 and 201 answers are: the collection's entries, one of its versions, or the generic answer. */
type Answer = 'entry' | 'version' | 'generic'

/** The editorial paths below ENTRY_PATH (contract §13) each collection has too, with what they answer. */
const EDITORIAL_PATHS: ReadonlyArray<readonly [suffix: string, answer: Answer]> = [
  ['/versions', 'generic'],
  ['/versions/{n}', 'version'],
  ['/versions/{n}/restore', 'entry'],
  ['/draft', 'entry'],
  ['/draft/publish', 'entry']
]

/** Error `code`s as an enum (from lib/errors.ts), HEAD without bodies, headers, security schemes. */
export function finishDocument (doc: OpenApiDocument, options: FinishOptions): OpenApiDocument {
  const errorReply = doc.components.schemas?.ErrorReply as { properties?: Record<string, JsonSchema> } | undefined
  if (errorReply?.properties?.code !== undefined) {
    errorReply.properties.code = { ...errorReply.properties.code, enum: Object.keys(ERROR_KINDS) }
  }
  for (const item of Object.values(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      declareCommonErrors(operation)
      declareHeaders(operation, options)
      if (method === 'head') stripBodies(operation)
    }
  }
  // Keys off: no operation needs one, which the document says once for all (an empty requirement).
  if (!options.keysEnabled) {
    delete doc.components.securitySchemes
    doc.security = [{}]
  }
  return doc
}

const ERROR_REF = { content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorReply' } } } }

/**
 * Statuses any route can answer before or around its handler: 400 (no Host header), 500, 503
 * (shutting down); with a body, 400 (unparsable), 413 (over the limit) and 415 (a type no
 * parser takes).
 */
function declareCommonErrors (operation: Operation): void {
  const responses = operation.responses ??= {}
  const statuses = operation.requestBody === undefined ? ['400', '500', '503'] : ['400', '413', '415', '500', '503']
  for (const status of statuses) {
    responses[status] ??= { description: ERROR_DESCRIPTIONS[status], ...structuredClone(ERROR_REF) }
  }
}

const ERROR_DESCRIPTIONS: Readonly<Record<string, string>> = {
  400: 'Bad request',
  413: 'The body is over the size limit',
  415: 'The body has a content type this route does not take',
  500: 'Internal error (the message is never shown)',
  503: 'Shutting down, or a service it needs is unavailable'
}

/** A HEAD answer has the headers of its GET and no body. */
function stripBodies (operation: Operation): void {
  for (const response of Object.values(operation.responses ?? {})) delete response.content
}

const BODY_SHAPES: Readonly<Record<string, Shape>> = { post: 'create', put: 'update', patch: 'patch' }

/** A generic content operation made concrete for `collection`. */
function concreteOperation (generic: Operation, method: string, path: string, collection: string, answer: Answer): Operation {
  const op = structuredClone(generic)
  op.operationId = operationId(method, path)
  op.summary = `${generic.summary ?? method} (${collection})`
  op.parameters = (op.parameters ?? []).filter(p => !(p.in === 'path' && p.name === 'collection'))
  if (op.parameters.length === 0) delete op.parameters
  const shape = BODY_SHAPES[method]
  if (shape !== undefined && op.requestBody !== undefined) {
    for (const media of Object.values(op.requestBody.content)) media.schema = ref(componentName(collection, shape))
  }
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if ((status !== '200' && status !== '201') || answer === 'generic') continue
    const media = response.content?.['application/json']
    if (media === undefined) continue
    const entry = ref(answer === 'version' ? versionComponentName(collection) : componentName(collection, 'entry'))
    const properties = media.schema.properties as JsonSchema | undefined
    media.schema = properties?.items !== undefined
      ? { ...media.schema, properties: { ...properties, items: { type: 'array', items: entry } } }
      : entry
  }
  return op
}

function concretePath (generic: Record<string, Operation> | undefined, path: string, collection: string, answer: Answer = 'entry'): Record<string, Operation> {
  const out: Record<string, Operation> = {}
  for (const [method, op] of Object.entries(generic ?? {})) out[method] = concreteOperation(op, method, path, collection, answer)
  return out
}

const versionComponentName = (collection: string): string => `${collection}.Version`

/**
 * An entry of the collection as it was at a version: its fields typed as now, but neither
 * required nor closed, since a version may predate the current schema; and `_version`.
 */
function versionComponent (entry: JsonSchema, label: string): JsonSchema {
  const properties = { ...entry.properties as JsonSchema, _version: { type: 'integer', minimum: 1, description: 'The version shown' } }
  return {
    type: 'object',
    properties,
    required: ['_slug', '_status', '_created_at', '_updated_at', '_version'],
    additionalProperties: true,
    description: `An entry of '${label}' as it was at a version (\`_updated_at\`: when the version was written)`
  }
}

/** Operation ids stay unique whatever the collection names (a suffix where two would meet). */
function uniqueOperationIds (paths: OpenApiDocument['paths']): void {
  const seen = new Set<string>()
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      const base = op.operationId ?? 'operation'
      let id = base
      for (let i = 2; seen.has(id); i++) id = `${base}${i}`
      op.operationId = id
      seen.add(id)
    }
  }
}

/** The document with every collection's concrete paths and `<name>.Entry|Create|Update|Patch` schemas. */
export function withCollections (doc: OpenApiDocument, schemas: readonly ResolvedSchema[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {}
  for (const [path, item] of Object.entries(doc.paths)) {
    paths[path] = item
    if (path !== ENTRY_PATH) continue
    // Concrete paths follow the generic ones, in collection order.
    for (const { name } of schemas) {
      const list = `/api/content/${name}`
      const entry = `${list}/{slug}`
      paths[list] = concretePath(doc.paths[LIST_PATH], list, name)
      paths[entry] = concretePath(doc.paths[ENTRY_PATH], entry, name)
      for (const [suffix, answer] of EDITORIAL_PATHS) {
        const generic = doc.paths[`${ENTRY_PATH}${suffix}`]
        if (generic !== undefined) paths[`${entry}${suffix}`] = concretePath(generic, `${entry}${suffix}`, name, answer)
      }
    }
  }
  uniqueOperationIds(paths)
  const components = collectionComponents(schemas)
  for (const schema of schemas) {
    const entry = components[componentName(schema.name, 'entry')]
    if (entry !== undefined) components[versionComponentName(schema.name)] = versionComponent(entry, schema.label ?? schema.name)
  }
  return {
    ...doc,
    paths,
    components: { ...doc.components, schemas: { ...doc.components.schemas, ...components } }
  }
}

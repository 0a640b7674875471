// The per-collection generator and its TypeScript rendering, field kind by field kind.
import t from 'tap'
import { collectionComponents, collectionSchema, fieldSchema } from '../../../lib/openapi/fields.js'
import { declarations, tsType, typeName } from '../../../lib/openapi/typescript.js'
import { describeRoute, operationId, plainUrl } from '../../../lib/openapi/routes.js'
import { withCollections, type OpenApiDocument } from '../../../lib/openapi/document.js'
import type { FieldDefinition, ResolvedSchema } from '../../../types/schema.js'

const known = new Set(['person'])
const schema = (fields: Record<string, FieldDefinition>, extra: Partial<ResolvedSchema> = {}): ResolvedSchema =>
  ({ name: 'thing', fields, reusable: false, strict: false, extends: null, ...extra })

t.test('field kinds', async t => {
  const entry = { shape: 'entry' as const, strict: false, known }
  const create = { shape: 'create' as const, strict: false, known }
  t.same(fieldSchema({ field_type: 'select', options: [1, 2], required: true }, entry), { type: 'number', enum: [1, 2] })
  t.same(fieldSchema({ field_type: 'select', options: ['a', 1] }, entry), { enum: ['a', 1, null] }, 'mixed options: no type, null in the enum')
  t.same(fieldSchema({ field_type: 'json' }, entry), {}, 'json takes anything, null included')
  t.match(fieldSchema({ field_type: 'reference', collection: 'person', required: true }, entry), { anyOf: [{ type: 'string' }, { $ref: '#/components/schemas/person.Entry' }] })
  t.match(fieldSchema({ field_type: 'reference', collection: 'gone' }, entry), { anyOf: [{ type: 'string', nullable: true }, { type: 'object' }] }, 'an unknown target resolves to an object')
  t.match(fieldSchema({ field_type: 'reference', collection: 'person', multiple: true, min_items: 1, max_items: 3 }, create), { type: 'array', minItems: 1, maxItems: 3, items: { anyOf: [{ type: 'string' }, { required: ['_slug'] }] } })
  t.match(fieldSchema({ field_type: 'multiselect', options: ['a'] }, create), { anyOf: [{ type: 'array', nullable: true }, { enum: ['a'] }] }, 'a write takes a lone option')
  t.match(fieldSchema({ field_type: 'number', min: 1, max: 2, label: 'N', description: 'D' }, entry), { type: 'number', minimum: 1, maximum: 2, title: 'N', description: 'D', nullable: true })
  t.match(fieldSchema({ field_type: 'string', min_length: 1, max_length: 5, pattern: '^a' }, entry), { minLength: 1, maxLength: 5, description: 'A string matching /^a/' })
  t.match(fieldSchema({ field_type: 'array', items: { field_type: 'date' }, min_items: 1 }, entry), { type: 'array', items: { format: 'date' }, minItems: 1 })
  t.match(fieldSchema({ field_type: 'array' }, entry), { type: 'array', items: {} })
})

t.test('shapes: what each body must hold', async t => {
  const s = schema({
    title: { field_type: 'string', required: true },
    flag: { field_type: 'boolean', required: true, default: true },
    id: { field_type: 'string', required: true, auto: 'uuid' },
    code: { field_type: 'string', required: true, readonly: true }
  }, { strict: true, label: 'Thing' })
  t.same(collectionSchema(s, 'create', known).required, ['_slug', 'title', 'code'])
  t.same(collectionSchema(s, 'update', known).required, ['title', 'flag'])
  t.notOk(collectionSchema(s, 'patch', known).required)
  t.same(collectionSchema(s, 'entry', known).required, ['_slug', '_status', '_created_at', '_updated_at'])
  t.equal(collectionSchema(s, 'entry', known).additionalProperties, false)
  t.match(collectionSchema(s, 'patch', known).properties, { title: { nullable: true } }, 'a patch clears with null')
  t.same(Object.keys(collectionComponents([s])), ['thing.Entry', 'thing.Create', 'thing.Update', 'thing.Patch'])
})

t.test('TypeScript rendering', async t => {
  t.equal(typeName('blog_post', 'entry'), 'BlogPostEntry')
  t.equal(typeName('2fa', 'patch'), '_2faPatch')
  t.equal(tsType({ $ref: '#/components/schemas/person.Entry' }), 'PersonEntry')
  t.equal(tsType({ $ref: '#/elsewhere' }), 'unknown')
  t.equal(tsType({ type: 'integer', nullable: true }), 'number | null')
  t.equal(tsType({ enum: ['a', null], nullable: true }), '"a" | null')
  t.equal(tsType({ type: 'array', items: { type: 'boolean' } }), 'Array<boolean>')
  t.equal(tsType({ type: 'object', properties: {}, additionalProperties: false }), '{}')
  t.match(tsType({ type: 'object', properties: { 'a-b': { type: 'string', description: 'x */ y' } }, required: ['a-b'] }), /\/\*\* x \* \/ y \*\/\n {2}"a-b": string\n {2}\[key: string\]: unknown/)
  const out = declarations([schema({ title: { field_type: 'string', required: true } })])
  t.match(out, /export type ThingEntry = \{/)
  t.match(out, /thing: \{ entry: ThingEntry, create: ThingCreate, update: ThingUpdate, patch: ThingPatch \}/)
})

t.test('routes: names, wildcard, security', async t => {
  t.equal(operationId('GET', '/health'), 'getHealth')
  t.equal(operationId('GET', '/'), 'getRoot')
  t.equal(plainUrl('/api/assets/*'), '/api/assets/:path')
  const guard = (): void => {}
  const route = { method: 'DELETE', preHandler: [guard] }
  const input = { url: '/api/assets/*', route, schema: { params: { type: 'object', properties: { '*': { type: 'string' } } }, response: { 204: {}, 401: {}, 403: {} } } }
  const on = describeRoute(input, { keysEnabled: true, isKeyGuard: h => h === guard })
  t.same(on.schema.security, [{ bearer: [] }, { apiKey: [] }])
  t.match(on.schema.params, { properties: { path: { description: /%2F/ } }, required: ['path'] })
  const off = describeRoute(input, { keysEnabled: false, isKeyGuard: h => h === guard })
  t.same(Object.keys(off.schema.response as object), ['204'])
  t.notOk(off.schema.security)
  t.same(describeRoute({ url: '/x', route: { method: ['GET', 'HEAD'] } }, { keysEnabled: true, isKeyGuard: () => false }).schema.security, [{}, { bearer: [] }, { apiKey: [] }])
  t.equal(describeRoute({ url: '/x', route: { method: 'GET' }, schema: { params: 'odd' } }, { keysEnabled: false, isKeyGuard: () => false }).schema.params, 'odd')
})

t.test('withCollections: concrete paths, unique ids', async t => {
  const doc: OpenApiDocument = {
    openapi: '3.0.3',
    info: {},
    components: {},
    paths: {
      '/api/content/{collection}': { get: { operationId: 'getContentByCollection', parameters: [{ name: 'collection', in: 'path' }], responses: { 200: { content: { 'application/json': { schema: { properties: { items: {} } } } } } } } },
      '/api/content/{collection}/{slug}': { put: { operationId: 'putContentByCollectionBySlug', requestBody: { content: { 'application/json': { schema: {} } } }, responses: { 200: { description: 'x' } } } }
    }
  }
  const out = withCollections(doc, [schema({}, { name: 'by_collection' })])
  t.ok(out.paths['/api/content/by_collection']?.get)
  t.equal(out.paths['/api/content/by_collection']?.get?.operationId, 'getContentByCollection2', 'a clash gets a suffix')
  t.same(out.paths['/api/content/by_collection/{slug}']?.put?.requestBody?.content['application/json']?.schema, { $ref: '#/components/schemas/by_collection.Update' })
  t.notOk(out.paths['/api/content/by_collection']?.get?.parameters, 'no collection parameter left')
})

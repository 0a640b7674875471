import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { CollectionModel } from '../types/schema.js'
import { ErrorReply } from '../types/errors.js'
import { finishDocument, withCollections, type OpenApiDocument } from '../lib/openapi/document.js'
import { describeRoute, type RouteInput } from '../lib/openapi/routes.js'

// The OpenAPI document is generated from the routes' TypeBox schemas, so it cannot drift
// from what the server validates and sends; lib/openapi/ makes it say what this server, as
// configured, does (contract §15), and adds each collection's paths and schemas.
// Served at /api/openapi.json; /docs browses it.
export default fp(async (fastify) => {
  const keysEnabled = fastify.config.apiKeys.length > 0
  fastify.addSchema(ErrorReply)
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Lectern',
        description: 'Schema-driven headless CMS: content, schemas, assets and webhooks over HTTP JSON.',
        version: '0.1.0',
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' }
      },
      servers: [{ url: fastify.config.publicUrl }],
      components: keysEnabled
        ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } }
        : {}
    },
    exposeHeadRoutes: true,
    transform: (input) => describeRoute(input as unknown as RouteInput, { keysEnabled, isKeyGuard: fastify.isKeyGuard }),
    transformObject: (documentObject) => {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject
      finishDocument(documentObject.openapiObject as unknown as OpenApiDocument, { keysEnabled, cors: fastify.config.corsOrigins.length > 0 })
      return documentObject.openapiObject
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })

  // The collections' part is rebuilt when the registry's models change (a schema write or reload).
  let built: { models: CollectionModel[], doc: OpenApiDocument } | null = null
  const documentNow = (): OpenApiDocument => {
    const models = fastify.schemas.collections()
    const same = built !== null && built.models.length === models.length && built.models.every((m, i) => m === models[i])
    if (built === null || !same) {
      built = { models, doc: withCollections(fastify.swagger() as unknown as OpenApiDocument, models.map(m => m.schema)) }
    }
    return built.doc
  }
  // /docs browses the same document, collections included.
  await fastify.register(swaggerUi, { routePrefix: '/docs', logLevel: 'warn', transformSpecification: () => documentNow(), transformSpecificationClone: false })
  fastify.get('/api/openapi.json', {
    schema: {
      tags: ['discovery'],
      summary: 'This OpenAPI document',
      description: 'The server as configured now, with a path and schemas for every collection.',
      response: { 200: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) }
    }
  }, async () => documentNow())
}, { name: 'openapi', dependencies: ['config', 'auth', 'schemas'], fastify: '5.x' })

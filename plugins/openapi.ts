import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { ErrorReply } from '../types/errors.js'

// The OpenAPI document is generated from the routes' TypeBox schemas, so it cannot drift
// from what the server validates and sends. Served at /api/openapi.json; /docs browses it.
export default fp(async (fastify) => {
  fastify.addSchema(ErrorReply)
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Lectern',
        description: 'Schema-driven headless CMS: content, schemas, assets and webhooks over HTTP JSON.',
        version: '0.1.0'
      },
      servers: [{ url: fastify.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' }
        }
      }
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  await fastify.register(swaggerUi, { routePrefix: '/docs', logLevel: 'warn' })
  fastify.get('/api/openapi.json', { schema: { hide: true } }, async () => fastify.swagger())
}, { name: 'openapi', dependencies: ['config'], fastify: '5.x' })

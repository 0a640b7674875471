import fp from 'fastify-plugin'
import cors from '@fastify/cors'

// CORS only when CMS_CORS_ORIGINS lists origins; `*` allows any.
export default fp(async (fastify) => {
  const origins = fastify.config.corsOrigins
  if (origins.length === 0) return
  await fastify.register(cors, {
    origin: origins.includes('*') ? true : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'X-API-Key', 'Content-Type', 'If-None-Match'],
    exposedHeaders: ['ETag']
  })
}, { name: 'cors', dependencies: ['config'], fastify: '5.x' })

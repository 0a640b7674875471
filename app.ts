// The application as a plugin: decorating plugins first, then the routes (folders mirror
// the URL tree), one error handler and one not-found handler. It never listens: server.ts (and
// the tests) build the instance (lib/server-options.ts) and register it.
import path from 'node:path'
import AutoLoad from '@fastify/autoload'
import sensible from '@fastify/sensible'
import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CmsError, errorBody } from './lib/errors.js'
import { refuseConnect, requireHost, shutdownGuard, unmetExpectation } from './lib/framework-errors.js'
import { requestValidatorCompiler } from './lib/request-validation.js'
import type { Config } from './lib/config.js'

export interface AppOptions {
  config: Config
}

async function app (fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  await fastify.register(sensible)
  // JSON bodies are checked as sent; query strings, paths and headers with Fastify's coercion.
  fastify.setValidatorCompiler(requestValidatorCompiler())

  // Bodies are JSON (or multipart, registered by the assets plugin): anything else is a 415.
  fastify.removeContentTypeParser('text/plain')

  // JSON bodies (and merge patches) are parsed by plugins/body.ts, with the nesting limit.

  await fastify.register(AutoLoad, {
    dir: path.join(import.meta.dirname, 'plugins'),
    options: opts,
    ignorePattern: /\.(test|d)\.(ts|js)$/
  })

  fastify.setErrorHandler(function handleError (err: FastifyError | CmsError, request, reply) {
    if (err instanceof CmsError) {
      if (err.statusCode === 401) reply.header('WWW-Authenticate', 'Bearer')
      if (err.statusCode >= 500) request.log.error({ err }, 'internal error')
      return reply.code(err.statusCode).send(err.toBody())
    }
    if (err.validation !== undefined) {
      const context = err.validationContext ?? 'request'
      const errors = err.validation.map(v => {
        const where = `${context}${v.instancePath.replace(/\//g, '.')}`
        const missing = (v.params as { missingProperty?: string }).missingProperty
        return missing !== undefined ? `${where}.${missing}: is required` : `${where}: ${v.message ?? 'is invalid'}`
      })
      return reply.code(400).send(errorBody(400, err.message, errors))
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
    if (status >= 500) {
      request.log.error({ err }, 'internal error')
      return reply.code(status).send(errorBody(status, 'An internal error occurred.'))
    }
    if (status === 401) reply.header('WWW-Authenticate', 'Bearer')
    return reply.code(status).send(errorBody(status, err.message))
  })

  // What Node would answer itself, in its own way, before Fastify sees a request (lib/framework-errors.ts).
  fastify.server.on('checkExpectation', unmetExpectation)
  fastify.server.on('connect', refuseConnect)
  fastify.addHook('onRequest', requireHost)
  const shutdown = shutdownGuard(() => { fastify.server.closeIdleConnections() })
  fastify.addHook('preClose', shutdown.preClose)
  fastify.addHook('onRequest', shutdown.onRequest)
  fastify.addHook('onResponse', shutdown.onResponse)

  fastify.setNotFoundHandler(function handleNotFound (request, reply) {
    return reply.code(404).send(errorBody(404, `Route ${request.method} ${request.url.split('?')[0] ?? ''} not found.`))
  })

  // Routes come after the handlers: a route keeps the error handler its context had when it was added.
  await fastify.register(AutoLoad, {
    dir: path.join(import.meta.dirname, 'routes'),
    routeParams: true,
    autoHooks: true,
    cascadeHooks: true,
    options: opts,
    ignorePattern: /^(schemas|handlers)\.(ts|js)$|\.d\.ts$/
  })
}

// Unencapsulated so the decorators (store, schemas, events...) are reachable from the instance
// that registers the app: server.ts and the tests.
export default fp(app, { name: 'lectern', fastify: '5.x' })

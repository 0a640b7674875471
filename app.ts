// The application as a plugin: decorating plugins first, then the routes (folders mirror
// the URL tree), one error handler and one not-found handler. It never listens. Also the logger
// and the Fastify instance that server.ts (and the tests) register it on.
import path from 'node:path'
import AutoLoad from '@fastify/autoload'
import sensible from '@fastify/sensible'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { pino, type DestinationStream, type Logger } from 'pino'
import { CmsError, errorBody } from './lib/errors.js'
import type { Config } from './lib/config.js'
import { DeferredChildLogger, deferringChildren, type ParentLogger } from './lib/log.js'

export interface AppOptions {
  config: Config
}

/** Server-level options that come from the settings (body limit, proxy trust). */
export function serverOptions (config: Config): FastifyServerOptions {
  return {
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    // Keys and cookies never reach a log line.
    logger: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    forceCloseConnections: false,
    return503OnClosing: true
  }
}

export const LOG_REDACT = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie']

/**
 * How a request and a reply appear in a line: the fields Fastify's own serializers give them,
 * set on Lectern's logger so the lines look the same whether or not Fastify has that logger
 * (see lecternServer).
 */
const LOG_SERIALIZERS = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: request.url,
    version: (request.headers as FastifyRequest['headers'] | undefined)?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: (request.socket as FastifyRequest['socket'] | undefined)?.remotePort
  }),
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
  err: pino.stdSerializers.err
}

/** Lectern's logger (JSON lines to stdout, or to `destination`): CMS_LOG_LEVEL, secrets redacted. */
export function createLogger (config: Config, destination?: DestinationStream): Logger {
  return pino({ level: config.logLevel, redact: { paths: LOG_REDACT, censor: '[redacted]' }, serializers: LOG_SERIALIZERS }, destination)
}

/**
 * Fastify's request lines, "incoming request" and "request completed", are info lines: when
 * info is off, they are not built at all. Every other line (a request that errored, a stream
 * that failed) is logged as Fastify logs it.
 */
class RequestLines extends LogController {
  constructor (private readonly infoEnabled: boolean) {
    super()
  }

  override incomingRequest (request: FastifyRequest, reply: FastifyReply): void {
    if (this.infoEnabled) super.incomingRequest(request, reply)
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.infoEnabled || (error !== null && error !== undefined)) super.requestCompleted(error, request, reply)
  }
}

/**
 * The instance to register the app on, logging through `logger`. A request's logger (bound to
 * its id) is made only when it first writes a line: see lib/log.ts.
 *
 * - At `info` and below, Fastify is given the logger and logs every request ("incoming
 *   request", "request completed", "request errored") as it does by default.
 * - Above `info`, Fastify is given no logger. With one, it prepares those lines on every request
 *   even when they are off: a child logger, `finish` and `error` listeners on the response and
 *   two clock readings. On a cached `_q` hit (about 35 µs of server CPU) that was 1-5 µs. Every
 *   other line still reaches `logger`: a request's `log` comes from `childLoggerFactory` (a
 *   DeferredChildLogger, which Fastify checks with an array and a filter: far less), and the
 *   instance's `log` is `logger`. The one line given up is "request errored", for a response
 *   stream that fails after its handler is done, on routes without an `onResponse` hook (the
 *   upload routes have one, from @fastify/multipart, so Fastify still times those).
 */
export function lecternServer (config: Config, logger: Logger, overrides: FastifyServerOptions = {}): FastifyInstance {
  const infoEnabled = logger.isLevelEnabled('info')
  const parent = logger as unknown as ParentLogger
  const { logger: _none, ...options } = serverOptions(config)
  const common = { ...options, ...overrides, logController: new RequestLines(infoEnabled) }
  if (infoEnabled) {
    return Fastify({ ...common, loggerInstance: deferringChildren(parent) as unknown as FastifyBaseLogger })
  }
  const fastify = Fastify({
    ...common,
    logger: false,
    childLoggerFactory: (_none, bindings, childOptions) => new DeferredChildLogger(parent, bindings, childOptions) as unknown as FastifyBaseLogger
  })
  // Fastify's own `log` is its null logger then; plugins and Fastify's instance-level lines use this one.
  fastify.log = logger as unknown as FastifyBaseLogger
  return fastify
}

async function app (fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  await fastify.register(sensible)

  // Bodies are JSON (or multipart, registered by the assets plugin): anything else is a 415.
  fastify.removeContentTypeParser('text/plain')

  // JSON merge patch (RFC 7396) bodies for PATCH are parsed like JSON, with the same guards.
  fastify.addContentTypeParser(
    'application/merge-patch+json',
    { parseAs: 'string' },
    fastify.getDefaultJsonParser('error', 'error')
  )

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

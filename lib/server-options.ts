// The options of the Fastify instance the app is registered on, built from the settings, and its
// logger: server.ts builds the instance from them, and so do the tests. Plain objects: Fastify
// takes them as they are (`Fastify({ ...serverOptions(config), loggerInstance: createLogger(config) })`).
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import type { Config } from './config.js'
import { MAX_PARAM_LENGTH, clientErrorHandler, frameworkErrors } from './framework-errors.js'
import { requestLogger } from './request-logger.js'

/** Keys and cookies never reach a log line. */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie']

const REDACTED = '[redacted]'

/** Query parameters whose values are credentials by their name: `key`, `api_key`, `access_token`, `secret`... */
const SECRET_PARAM = /key|token|secret|pass|auth|sig|session|credential/i

function paramName (pair: string): string {
  const raw = pair.split('=', 1)[0] ?? ''
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '))
  } catch {
    return raw
  }
}

/**
 * A request URL as a log line may show it: the value of every query parameter named like a
 * credential is replaced, and so is each configured key wherever it appears (raw or encoded),
 * whatever the parameter is called. Keys are never accepted in the query string (401), but a
 * client that sends one must not leave it in a log.
 */
export function redactUrl (url: string, keys: readonly string[] = []): string {
  const at = url.indexOf('?')
  let out = at === -1
    ? url
    : url.slice(0, at + 1) + url.slice(at + 1).split('&')
      .map(pair => SECRET_PARAM.test(paramName(pair)) && pair.includes('=') ? `${pair.split('=', 1)[0] ?? ''}=${REDACTED}` : pair)
      .join('&')
  for (const key of keys) {
    for (const form of new Set([key, encodeURIComponent(key)])) out = out.split(form).join(REDACTED)
  }
  return out
}

/** The parts of Fastify's request and reply that a log line shows. */
interface LoggedRequest {
  method: string
  url?: string
  headers?: Record<string, string | string[] | undefined>
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}

/**
 * How a request and a reply appear in a line: the fields Fastify's own serializers give them.
 * Fastify sets those only on a logger it builds itself, not on one it is given.
 */
function logSerializers (keys: readonly string[]): LoggerOptions['serializers'] {
  return {
    req: (request: LoggedRequest) => ({
      method: request.method,
      url: typeof request.url === 'string' ? redactUrl(request.url, keys) : request.url,
      version: request.headers?.['accept-version'],
      host: request.host,
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort
    }),
    res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
    err: errorWithoutStack
  }
}

/**
 * An error as a line shows it: its type, message and own fields (a code, a status), never its
 * stack, which tells an attacker who reads the log how the code is laid out (and can carry paths).
 */
function errorWithoutStack (err: Error): Record<string, unknown> {
  const { stack: _stack, ...rest } = pino.stdSerializers.err(err) as unknown as Record<string, unknown>
  return rest
}

/**
 * Lectern's logger, given to Fastify as its `loggerInstance`: JSON lines to stdout (or to
 * `destination`) at CMS_LOG_LEVEL, secrets redacted (headers, and keys in logged URLs). Fastify logs each request through a child
 * of it bound to the request id: "incoming request" and "request completed" at info, errors at
 * their own level.
 */
export function createLogger (config: Config, destination?: DestinationStream): Logger {
  return pino({ level: config.logLevel, redact: { paths: LOG_REDACT, censor: REDACTED }, serializers: logSerializers(config.apiKeys.map(k => k.key)) }, destination)
}

/** The Fastify server options Lectern sets (a subset of Fastify's, by their documented names). */
export interface ServerOptions {
  bodyLimit: number
  trustProxy: boolean
  routerOptions: { ignoreTrailingSlash: boolean, maxParamLength: number }
  onProtoPoisoning: 'error'
  onConstructorPoisoning: 'error'
  forceCloseConnections: 'idle'
  return503OnClosing: boolean
  pluginTimeout: number
  frameworkErrors: typeof frameworkErrors
  clientErrorHandler: typeof clientErrorHandler
  http: { requireHostHeader: boolean }
  childLoggerFactory: typeof requestLogger
}

/** Server-level options that come from the settings (body limit, proxy trust), and Lectern's fixed ones. */
export function serverOptions (config: Config): ServerOptions {
  return {
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A close ends idle keep-alive connections at once; those in flight close once their last
    // answer is sent (framework-errors.ts shutdownGuard), so none outlives its requests.
    forceCloseConnections: 'idle',
    // Its 503 is not the envelope: app.ts answers those requests (framework-errors.ts shutdownGuard).
    return503OnClosing: false,
    // Errors raised before a route runs answer in the envelope too (contract §2).
    frameworkErrors,
    clientErrorHandler,
    // Node's own answer to a request without Host is an empty 400: the app's hook answers it instead.
    http: { requireHostHeader: false },
    // A request's pino child is made when it first logs (lib/request-logger.ts), not for every request.
    childLoggerFactory: requestLogger,
    // Start-up opens the store, and the file store reads every entry (and checks its change log)
    // before the app is ready: with a large collection or a busy machine that is well past
    // Fastify's default 10 s per plugin, which would refuse to start a healthy server.
    pluginTimeout: 120_000
  }
}

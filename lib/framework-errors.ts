// Errors raised before any route or error handler runs, answered in the contract's envelope
// (§2) with a code of its table, instead of Fastify's and Node's own bodies (or none):
//   - the router's: a path that is not valid percent-encoded UTF-8, or a path parameter over
//     MAX_PARAM_LENGTH (Fastify's `frameworkErrors`);
//   - Node's HTTP parser's: a space in the request target, a bad header, headers over the
//     limit, a timeout (Fastify's `clientErrorHandler`);
//   - what Node would answer itself: an HTTP/1.1 request without Host (Node's empty 400, turned
//     off with `requireHostHeader: false` and checked in an onRequest hook instead), an Expect
//     other than 100-continue (Node's empty 417) and CONNECT (Node closes the connection).
// The table has one kind for all of them: 400 BAD_REQUEST. And a request that arrives on an open
// connection while the server shuts down: Fastify's own 503 (`return503OnClosing`) is turned off
// for a 503 in the envelope from shutdownGuard.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { CmsError, badRequest, errorBody } from './errors.js'

/** The longest path parameter the router accepts (Fastify's `maxParamLength`): slugs are up to 200. */
export const MAX_PARAM_LENGTH = 500

/**
 * What `frameworkErrors` uses of Fastify's reply, typed loosely enough for Fastify's generic
 * reply type to fit (lib/ does not import fastify): `send` takes the envelope.
 */
export interface EnvelopeReply {
  code (statusCode: number): { send (payload: never): unknown }
}

/** Messages for the router's errors, by Fastify's code; they do not echo the path. */
const FRAMEWORK_MESSAGES: Readonly<Record<string, string>> = {
  FST_ERR_BAD_URL: 'The request path is not valid: a percent-encoded part of it is not UTF-8.',
  FST_ERR_MAX_PARAM_LENGTH: `A part of the request path is longer than ${MAX_PARAM_LENGTH} characters.`
}

/** Fastify's `frameworkErrors`: the router's errors (the other one it routes here is a 500). */
export function frameworkErrors (error: { code?: string }, _request: unknown, reply: EnvelopeReply): void {
  const code = error.code ?? ''
  const body = Object.hasOwn(FRAMEWORK_MESSAGES, code)
    ? errorBody(400, FRAMEWORK_MESSAGES[code] as string)
    : errorBody(500, 'An internal error occurred.')
  reply.code(body.statusCode).send(body as never)
}

/** Messages for Node's HTTP parser errors, by Node's code; any other says the request is not valid HTTP. */
const CLIENT_MESSAGES: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: 'The request headers are larger than the server accepts.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time.',
  ERR_HTTP_HEADERS_TIMEOUT: 'The request headers were not received in time.'
}

/** A whole 400 answer in the envelope, for a socket no response object is attached to. */
function rawBadRequest (message: string): string {
  const body = JSON.stringify(errorBody(400, message))
  return `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

/**
 * Fastify's `clientErrorHandler`: the answer is written on the socket, which is then closed (the
 * connection cannot be trusted to be in step any more). A reset or closed socket gets nothing.
 */
export function clientErrorHandler (error: { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const code = error.code ?? ''
  const message = Object.hasOwn(CLIENT_MESSAGES, code) ? CLIENT_MESSAGES[code] as string : 'The request is not valid HTTP.'
  if (socket.writable) socket.end(rawBadRequest(message))
  else socket.destroy()
}

/** The HTTP server's 'connect' listener: CONNECT is no method of this API. */
export function refuseConnect (_request: IncomingMessage, socket: Duplex): void {
  if (socket.writable) socket.end(rawBadRequest('CONNECT is not supported.'))
  else socket.destroy()
}

/** The HTTP server's 'checkExpectation' listener: only `Expect: 100-continue` is met (by Node). */
export function unmetExpectation (_request: IncomingMessage, response: ServerResponse): void {
  const body = JSON.stringify(errorBody(400, "The Expect header is not supported (only '100-continue' is)."))
  response.writeHead(400, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' })
  response.end(body)
}

/**
 * An onRequest hook: an HTTP/1.1 request must name its host (RFC 9112 §3.2). Callback style, as
 * the shutdown guard's: an async hook costs every request a promise and a microtask.
 */
export function requireHost (request: { raw: IncomingMessage }, _reply: unknown, done: (err?: Error) => void): void {
  if (request.raw.httpVersion === '1.1' && request.raw.headers.host === undefined) {
    done(badRequest('An HTTP/1.1 request must have a Host header.'))
  } else {
    done()
  }
}

interface HeaderReply { header (name: string, value: string): unknown }

/**
 * Hooks that answer a 503 in the envelope, with `Connection: close`, to requests that arrive
 * once the server has begun to close (on keep-alive connections still open), as Fastify's
 * `return503OnClosing` does in a body of its own; and that close each keep-alive connection
 * as soon as its last answer is sent (`closeIdle`: the server's `closeIdleConnections`),
 * otherwise a keep-alive client holds its connection, and with it the shutdown, until its idle
 * timeout. A request pipelined behind one in flight is still answered (the 503) first.
 */
export function shutdownGuard (closeIdle: () => void): {
  preClose: () => Promise<void>
  onRequest: (request: unknown, reply: HeaderReply, done: (err?: Error) => void) => void
  onResponse: (request: unknown, reply: unknown, done: () => void) => void
} {
  let closing = false
  return {
    preClose: async () => { closing = true },
    // Callback style, as requireHost: they run on every request, and an async hook costs each a
    // promise and a microtask. After Node has moved on to the connection's next answer, if any:
    // only idle connections close.
    onResponse: (_request, _reply, done) => {
      if (closing) setImmediate(closeIdle)
      done()
    },
    onRequest: (_request, reply, done) => {
      if (!closing) {
        done()
        return
      }
      reply.header('connection', 'close')
      // A 5xx shows a generic message (errors.ts): the status and Connection: close say it all.
      done(new CmsError('UNAVAILABLE', 'The server is shutting down.'))
    }
  }
}

// The content pipeline (lib/content/service.ts) on the instance, and the two reply helpers its
// routes answer with: bodies are serialized once by the pipeline, so the ETag hashes the bytes sent.
import fp from 'fastify-plugin'
import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { BodyPool } from '../lib/content/body-pool.js'
import { TextBudget } from '../lib/content/json-memo.js'
import { ContentService, type Rendered } from '../lib/content/service.js'
import { ifNoneMatch } from '../lib/etag.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The content pipeline (interface.md "Entries"): create, update, patch, remove, get, list and
     * slugCheck. `content.hooks.add('check' | 'prepare' | 'written', hook)` is where the
     * references and cache plugins join the write pipeline (lib/content/hooks.ts).
     */
    content: ContentService
    /**
     * An onRequest hook for a read route: when `lookup` finds a cached answer, it is sent there
     * and then, before the query is validated (written directly where it can be: writeHit;
     * otherwise sendRendered); when it does not, the route runs.
     */
    cachedReply: (lookup: (request: FastifyRequest) => Rendered | undefined) => onRequestHookHandler
  }
  interface FastifyReply {
    /** Sends a body serialized by the content pipeline as JSON, byte for byte. */
    sendJson: (body: string) => FastifyReply
    /**
     * Sends a rendered read (an entry or a list) with its `ETag` and `Cache-Control: no-cache`,
     * or a 304 with the `ETag` and no body when `If-None-Match` matches it.
     */
    sendRendered: (rendered: Rendered) => FastifyReply
  }
  interface FastifyRequest {
    /** The query string as received, without the `?` (empty when there is none): a list's cache key. */
    readonly queryString: string
  }
}

const JSON_TYPE = 'application/json; charset=utf-8'

export default fp(async (fastify) => {
  fastify.decorate('content', new ContentService({
    registry: fastify.schemas,
    store: fastify.store,
    emit: event => { fastify.events.emit(event) },
    texts: new TextBudget(fastify.config.textCacheBytes),
    bodies: new BodyPool({ maxFreeBytes: fastify.config.bodyPoolBytes })
  }))

  // The pipeline serializes bodies itself because the ETag is a hash of their exact bytes;
  // a string with a JSON content type goes out as it is, without the route's serializer.
  fastify.decorateReply('sendJson', function sendJson (this: FastifyReply, body: string) {
    return this.type(JSON_TYPE).send(body)
  })

  fastify.decorateRequest('queryString', {
    getter (this: FastifyRequest): string {
      const url = this.url
      const mark = url.indexOf('?')
      return mark === -1 ? '' : url.slice(mark + 1)
    }
  })

  fastify.decorate('cachedReply', (lookup: (request: FastifyRequest) => Rendered | undefined): onRequestHookHandler =>
    function cachedReply (request, reply, done) {
      const hit = lookup(request)
      // A reply sent from a hook ends the request there (done is not called).
      if (hit === undefined) done()
      else if (reply.statusCode === 200 && routeHasNoSendHooks(request) && !ifNoneMatch(request.headers['if-none-match'], hit.etag)) writeHit(reply, hit)
      else reply.sendRendered(hit)
    })

  fastify.decorateReply('sendRendered', function sendRendered (this: FastifyReply, rendered: Rendered) {
    // Pooled memory is reused once the response has been handed to the socket ('finish'); a
    // connection closed before that leaves it to the garbage collector.
    if (rendered.release !== undefined) this.raw.once('finish', rendered.release)
    this.header('etag', rendered.etag)
    this.header('cache-control', 'no-cache')
    if (ifNoneMatch(this.request.headers['if-none-match'], rendered.etag)) return this.code(304).send()
    return this.type(JSON_TYPE).send(rendered.body)
  })
}, { name: 'content', dependencies: ['config', 'schemas', 'store', 'events', 'locales'], fastify: '5.x' })

/**
 * A cached 200, answered from the onRequest hook (no handler has run), written straight to the
 * response: the bytes and the ETag are ready, so Fastify's send (content-type parsing, onSend
 * hooks, a header object) has nothing to add, and it cost about 3 µs of a hit's 33-43 µs of
 * server CPU (7-10% of its req/s, measured here). The wire is the same as sendRendered's: the
 * headers earlier hooks set on the reply (CORS) go out, first, as Fastify sends them, and
 * onResponse hooks and the request log run on the response's 'finish' as for any reply.
 * What differs: only for routes without onSend hooks (routeHasNoSendHooks), which would be
 * skipped; trailers set by a hook are not sent (none is); and after it the reply object does not
 * hold the headers written here (`reply.getHeader('etag')` in an onResponse hook is undefined).
 */
function writeHit (reply: FastifyReply, hit: Rendered): void {
  if (hit.release !== undefined) reply.raw.once('finish', hit.release)
  const head: Array<string | number | readonly string[]> = []
  const set = reply.getHeaders()
  for (const name in set) {
    const value = set[name]
    if (value !== undefined && name !== 'content-type' && name !== 'etag' && name !== 'cache-control' && name !== 'content-length') head.push(name, value)
  }
  head.push('content-type', JSON_TYPE, 'etag', hit.etag, 'cache-control', 'no-cache', 'content-length', hit.body.length)
  // writeHead checks each header before it stores it and sends nothing: if a header set by an
  // earlier hook cannot be sent, it throws before any of these is stored, and the hook runner
  // answers the error as it does when Fastify's send throws it.
  reply.raw.writeHead(200, head as unknown as OutgoingHttpHeaders)
  reply.hijack()
  reply.raw.end(hit.body)
}

/** Fastify's route context on a request, by its symbol; null if this Fastify has none. */
let contextSymbol: symbol | null | undefined

/**
 * Whether the route that answers `request` runs no onSend hook (Fastify's HEAD routes do: they
 * drop the body), read from Fastify's route context, which no public API exposes. The symbol
 * is found once, by its description; if a Fastify release renames it, every reply takes
 * Fastify's own path again, slower but the same on the wire (a test checks it is found).
 */
export function routeHasNoSendHooks (request: FastifyRequest): boolean {
  if (contextSymbol === undefined) {
    contextSymbol = Object.getOwnPropertySymbols(request).find(symbol => symbol.description === 'fastify.context') ?? null
  }
  if (contextSymbol === null) return false
  const context = (request as unknown as Record<symbol, { onSend?: unknown } | undefined>)[contextSymbol]
  return context?.onSend === null
}

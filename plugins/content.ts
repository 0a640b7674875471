// The content pipeline (lib/content/service.ts) on the instance, and the two reply helpers its
// routes answer with: bodies are serialized once by the pipeline, so the ETag hashes the bytes sent
// (uncompressed: contract §11).
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { BodyPool } from '../lib/content/body-pool.js'
import { ContentService, type Rendered } from '../lib/content/service.js'
import { compress } from '../lib/compression.js'
import { ifNoneMatch } from '../lib/etag.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The content pipeline (interface.md "Entries"): create, update, patch, remove, get, list and
     * slugCheck, and the editorial workflow (contract §13: versions, restore, drafts, the
     * scheduler's publish and unpublish), built from the services it calls by name: the store, the references (reference
     * check, asset URLs, reverse index, `_resolve`) and the response cache.
     */
    content: ContentService
    /**
     * An onRequest hook for a read route: when `lookup` finds a cached answer, it is sent there
     * and then with sendRendered, before the query is validated; when it does not, the route runs.
     */
    cachedReply: (lookup: (request: FastifyRequest) => Rendered | undefined) => onRequestHookHandler
  }
  interface FastifyReply {
    /**
     * Sends a body serialized by the content pipeline as JSON (text, or its UTF-8 bytes), byte for
     * byte; `release` gives pooled memory back once the body is sent (lib/content/body-pool.ts).
     */
    sendJson: (body: string | Buffer, release?: () => void) => FastifyReply
    /**
     * Sends a rendered read (an entry or a list) with its `ETag` and `Cache-Control: no-cache`,
     * or a 304 with the `ETag` and no body when `If-None-Match` matches it. From 1 KB, compressed
     * when the request accepts it (see encodingFor), with the ETag of the uncompressed body.
     */
    sendRendered: (rendered: Rendered) => FastifyReply
  }
  interface FastifyRequest {
    /** The query string as received, without the `?` (empty when there is none): a list's cache key. */
    readonly queryString: string
  }
}

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Pooled memory is reused once the response has been handed to the socket ('finish'); a
 * connection closed before that leaves it to the garbage collector.
 */
function releaseWhenSent (reply: FastifyReply, release: (() => void) | undefined): void {
  if (release !== undefined) reply.raw.once('finish', release)
}

export default fp(async (fastify) => {
  fastify.decorate('content', new ContentService({
    registry: fastify.schemas,
    store: fastify.store,
    references: fastify.references,
    cache: fastify.responseCache,
    emit: event => { fastify.events.emit(event) },
    // One budget for every kept text, the views' here and `_resolve`'s (plugins/references.ts makes it).
    texts: fastify.references.texts,
    bodies: new BodyPool({ maxFreeBytes: fastify.config.bodyPoolBytes }),
    revisions: fastify.config.revisions
  }))

  // The pipeline serializes bodies itself because the ETag is a hash of their exact bytes;
  // a string with a JSON content type goes out as it is, without the route's serializer.
  fastify.decorateReply('sendJson', function sendJson (this: FastifyReply, body: string | Buffer, release?: () => void) {
    releaseWhenSent(this, release)
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
      else reply.sendRendered(hit)
    })

  const cache = fastify.responseCache
  // A copy kept for a cached answer counts in the cache's byte bound (CMS_CACHE_MAX_BYTES).
  const copyMade = (body: Buffer, copy: Buffer): void => { cache.keptBeside(body, copy.length) }

  fastify.decorateReply('sendRendered', function sendRendered (this: FastifyReply, rendered: Rendered) {
    releaseWhenSent(this, rendered.release)
    this.header('etag', rendered.etag)
    this.header('cache-control', 'no-cache')
    const encoding = this.encodingFor(rendered.body.length)
    if (ifNoneMatch(this.request.headers['if-none-match'], rendered.etag)) return this.code(304).send()
    this.type(JSON_TYPE)
    if (encoding === null) return this.send(rendered.body)
    // A cached answer's body keeps its compressed copy, so a hit is not compressed again; a
    // pooled body is sent once, and its copy is made before its memory goes back to the pool.
    const bytes = rendered.release === undefined ? fastify.compressedCopies.get(rendered.body, encoding, copyMade) : compress(rendered.body, encoding)
    return this.header('content-encoding', encoding).send(bytes)
  })
}, { name: 'content', dependencies: ['config', 'schemas', 'store', 'events', 'locales', 'references', 'cache', 'compression'], fastify: '5.x' })

// Response compression (contract §11; lib/compression.ts): answers of 1 KB or more go out br or
// gzip when the request accepts it, with `Vary: Accept-Encoding`; images and other files already
// compressed do not. An onSend hook compresses ordinary replies and files; content reads
// (plugins/content.ts sendRendered) compress their rendered bodies themselves, keeping the copies
// of cached answers, and the admin's files come pre-compressed (plugins/admin.ts). Answers that
// already have a Content-Encoding are left as they are. CMS_COMPRESSION=false turns it all off.
//
// Not @fastify/compress (9.2): whatever its `customTypes` says, it compresses every type mime-db
// calls compressible (SVG, BMP and icon images among them), and it compresses streams (files)
// of any size, below its threshold too.
import { pipeline, Readable } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyReply, onSendHookHandler } from 'fastify'
import { acceptedEncoding, compress, compressibleType, compressStream, CompressedCopies, MIN_COMPRESSED_BYTES, type Encoding } from '../lib/compression.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Compressed copies of kept answers (the response cache's), so a hit is not compressed again. */
    compressedCopies: CompressedCopies
  }
  interface FastifyReply {
    /**
     * The encoding to send a body of `bytes` bytes in: null when compression is off, the body
     * is under 1 KB, or the request accepts neither br nor gzip. From 1 KB on, the answer depends
     * on the request's Accept-Encoding, and `Vary: Accept-Encoding` is added to say so (to a 304
     * as well: it carries the Vary its 200 would).
     */
    encodingFor: (bytes: number) => Encoding | null
  }
}

export default fp(async (fastify) => {
  const enabled = fastify.config.compression
  fastify.decorate('compressedCopies', new CompressedCopies())
  fastify.decorateReply('encodingFor', enabled ? encodingFor : uncompressed)
  if (enabled) fastify.addHook('onSend', compressReply)
}, { name: 'compression', dependencies: ['config'], fastify: '5.x' })

function uncompressed (): null {
  return null
}

function encodingFor (this: FastifyReply, bytes: number): Encoding | null {
  if (bytes < MIN_COMPRESSED_BYTES) return null
  varyOnAcceptEncoding(this)
  return acceptedEncoding(this.request.headers['accept-encoding'])
}

const VARIES_ON_ENCODING = /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i

/** Adds Accept-Encoding to the reply's Vary, keeping what is there (CORS adds Origin). */
function varyOnAcceptEncoding (reply: FastifyReply): void {
  const vary = reply.getHeader('vary')
  if (vary === undefined) reply.header('vary', 'accept-encoding')
  else if (!VARIES_ON_ENCODING.test(String(vary))) reply.header('vary', `${String(vary)}, accept-encoding`)
}

/** Statuses whose answer has no body to compress, or whose body is a part of one (206). */
const NOT_COMPRESSED = new Set([204, 206, 304])

/**
 * Compresses a reply that is not compressed yet, of a compressible type: a string or a Buffer
 * at once (with its new Content-Length), a file stream through a compressing stream (when its
 * Content-Length says 1 KB or more, or says nothing).
 */
const compressReply: onSendHookHandler = function compressReply (request, reply, payload, done) {
  const bytes = bodyBytes(reply, payload)
  const type = reply.getHeader('content-type')
  if (bytes === null || NOT_COMPRESSED.has(reply.statusCode) || reply.hasHeader('content-encoding') || typeof type !== 'string' || !compressibleType(type)) {
    done(null, payload)
    return
  }
  const encoding = reply.encodingFor(bytes)
  if (encoding === null) {
    done(null, payload)
    return
  }
  reply.header('content-encoding', encoding)
  if (payload instanceof Readable) {
    reply.removeHeader('content-length')
    // HEAD: the headers a GET gets; Fastify drains the file without sending it, so it is not compressed.
    if (request.method === 'HEAD') done(null, payload)
    // An error on either side destroys the other; Fastify answers it on the stream it sends.
    else done(null, pipeline(payload, compressStream(encoding), () => {}))
    return
  }
  const compressed = compress(payload as Buffer | string, encoding)
  reply.header('content-length', compressed.length)
  done(null, compressed)
}

/** The size of a reply's body: a string's or Buffer's, a stream's Content-Length (Infinity when unset); null for anything else. */
function bodyBytes (reply: FastifyReply, payload: unknown): number | null {
  if (typeof payload === 'string') return Buffer.byteLength(payload)
  if (Buffer.isBuffer(payload)) return payload.length
  if (payload instanceof Readable) {
    const length = reply.getHeader('content-length')
    return length === undefined ? Infinity : Number(length)
  }
  return null
}

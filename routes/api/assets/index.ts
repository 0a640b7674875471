// /api/assets (contract §7): upload, list, serve and delete. The multipart parser and the
// static-file sender are registered here, encapsulated: only these routes accept multipart
// bodies, and `reply.sendFile` cannot clash with another static root elsewhere in the app.
import { ReadStream } from 'node:fs'
import { once } from 'node:events'
import multipart from '@fastify/multipart'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { notFound, unsupportedMediaType } from '../../../lib/errors.js'
import { isMissing } from '../../../lib/assets/paths.js'
import { servingHeaders, type LocatedAsset } from '../../../lib/assets/library.js'
import { deleteSchema, listSchema, serveSchema, uploadSchema } from './schemas.js'

/** Files per upload request. */
const MAX_FILES = 100

/** What @fastify/static sets for a file it is about to send: none of it fits an error answer. */
const REPRESENTATION_HEADERS = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified', 'cache-control', 'content-security-policy']

/**
 * Waits until the file being served is open, before a byte or a header is sent: from then on a
 * delete cannot take it away (the descriptor holds it). A file deleted between the stat and the
 * open (a GET racing a DELETE) is a 404 in the envelope, its file headers dropped.
 */
async function openBeforeAnswering (stream: ReadStream, reply: FastifyReply, asset: string): Promise<void> {
  if (!stream.pending) return
  try {
    await once(stream, 'ready')
  } catch (err) {
    stream.destroy()
    for (const name of REPRESENTATION_HEADERS) reply.removeHeader(name)
    if (isMissing(err)) throw notFound(`Asset '${asset}' not found.`)
    throw err
  }
}

const assets: FastifyPluginAsyncTypebox = async (fastify) => {
  await fastify.register(multipart, {
    // The library turns a truncated (over-limit) file into a 413 and removes it.
    throwFileSizeLimit: true,
    limits: { fileSize: fastify.config.uploadLimit, files: MAX_FILES, fields: 4, parts: MAX_FILES + 4, fieldSize: 2048, headerPairs: 100 }
  })
  // The asset each request is serving: its type for the headers, its size for a 416.
  const serving = new WeakMap<FastifyRequest, LocatedAsset>()

  // No root and no routes: sendFile gets the environment's (real) directory each time. The type
  // is set only once send has opened the file: a file deleted since it was located answers the
  // not-found envelope, which a type set earlier (image/png) would make unsendable (a 500).
  await fastify.register(fastifyStatic, {
    serve: false,
    root: fastify.config.assetsDir,
    suppressWarning: true,
    setHeaders: (reply) => {
      const asset = serving.get(reply.request)
      if (asset !== undefined) reply.headers(servingHeaders(asset.meta.mime))
    }
  })

  fastify.post('/', {
    schema: uploadSchema,
    preHandler: fastify.requirePermission('AssetsWrite')
  }, async (request, reply) => {
    if (!request.isMultipart()) throw unsupportedMediaType('Uploads must be sent as multipart/form-data.')
    const { environment } = fastify.scopeOf(request.query)
    const items = await fastify.assets.upload(environment, request.parts())
    reply.code(201)
    return { items }
  })

  fastify.get('/', { schema: listSchema }, async (request) => {
    const { folder, mime, _q: q, _page: page, _per_page: perPage, _after: after } = request.query
    return fastify.assets.list(fastify.scopeOf(request.query).environment, { folder, mime, q, page, perPage, after })
  })

  fastify.get('/*', {
    schema: serveSchema,
    onSend: async (request, reply, payload) => {
      if (payload instanceof ReadStream) await openBeforeAnswering(payload, reply, serving.get(request)?.meta.path ?? '')
      // A 304 carries no representation headers (RFC 9110 §15.4.5).
      if (reply.statusCode === 304) reply.removeHeader('content-type')
      // A 416 says how long the file is (RFC 9110 §15.5.17); the error envelope drops send's header.
      const size = serving.get(request)?.stat.size
      if (reply.statusCode === 416 && size !== undefined) reply.header('content-range', `bytes */${size}`)
      return payload
    }
  }, async (request, reply) => {
    const { environment } = fastify.scopeOf(request.query)
    const asset = await fastify.assets.locate(environment, request.params['*'])
    serving.set(request, asset)
    // ETag, Last-Modified, 304 and ranges come from @fastify/send; the type is the detected one.
    return reply.sendFile(asset.relative, asset.root, { contentType: false, dotfiles: 'deny' })
  })

  fastify.delete('/*', {
    schema: deleteSchema,
    preHandler: fastify.requirePermission('AssetsWrite')
  }, async (request, reply) => {
    await fastify.assets.remove(fastify.scopeOf(request.query).environment, request.params['*'])
    return reply.code(204).send(null)
  })
}

export default assets

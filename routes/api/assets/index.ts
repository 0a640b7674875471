// /api/assets (contract §7): upload, list, serve and delete. The multipart parser and the
// static-file sender are registered here, encapsulated: only these routes accept multipart
// bodies, and `reply.sendFile` cannot clash with another static root elsewhere in the app.
import multipart from '@fastify/multipart'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { unsupportedMediaType } from '../../../lib/errors.js'
import { servingHeaders, type LocatedAsset } from '../../../lib/assets/library.js'
import { deleteSchema, listSchema, serveSchema, uploadSchema } from './schemas.js'

/** Files per upload request. */
const MAX_FILES = 100

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
    const { folder, mime, _q: q, _page: page, _per_page: perPage } = request.query
    return fastify.assets.list(fastify.scopeOf(request.query).environment, { folder, mime, q, page, perPage })
  })

  fastify.get('/*', {
    schema: serveSchema,
    onSend: async (request, reply, payload) => {
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

// GET /api/transform/<path> (contract §7): image variants from the transform cache.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { servingHeaders } from '../../../lib/assets/library.js'
import { VARIANT_CACHE_CONTROL } from '../../../lib/assets/transforms.js'
import { ifNoneMatch } from '../../../lib/etag.js'
import { transformSchema } from './schemas.js'

// A 304 has no body and no body headers (RFC 9110 §15.4.5): `undefined` is sent as nothing, where
// `null` would be serialized as JSON (Content-Type: application/json, Content-Length: 4).
const NO_BODY = undefined as unknown as null

const transform: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/*', { schema: transformSchema }, async (request, reply) => {
    const { environment } = fastify.scopeOf(request.query)
    const variant = await fastify.transforms.prepare(environment, request.params['*'], request.query, request.headers.accept)
    reply.header('etag', variant.etag).header('cache-control', VARIANT_CACHE_CONTROL)
    if (variant.varyAccept) reply.header('vary', 'Accept')
    if (ifNoneMatch(request.headers['if-none-match'], variant.etag)) return reply.code(304).send(NO_BODY)
    const { body, size } = await fastify.transforms.read(variant)
    return reply.headers(servingHeaders(variant.mime)).header('content-length', size).send(body)
  })
}

export default transform

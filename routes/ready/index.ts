import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CmsError } from '../../lib/errors.js'
import { errorResponses } from '../../types/errors.js'

export const ReadyReply = Type.Object({ status: Type.Literal('ready') }, {
  // Documentation only (the OpenAPI document's response headers): the route sets it.
  headers: { 'Cache-Control': Type.String({ description: '`no-store`: a readiness answer is for now only' }) }
})

// Readiness (contract §12): whether this process can serve content now, which /health (liveness)
// does not ask. A load balancer or orchestrator takes the replica out while it answers 503.
const ready: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: {
      tags: ['discovery'],
      summary: 'Readiness check',
      description: '200 when the store answers; 503 `UNAVAILABLE` when it does not (closed, database or data folder unreachable).',
      response: { 200: ReadyReply, ...errorResponses(503) }
    }
  }, async (request, reply) => {
    try {
      await fastify.store.ping()
    } catch (err) {
      // The reason goes to the log (a 5xx body stays generic: lib/errors.ts).
      request.log.warn({ err }, 'store not ready')
      throw new CmsError('UNAVAILABLE', 'The store cannot answer.')
    }
    reply.header('cache-control', 'no-store')
    return { status: 'ready' as const }
  })
}

export default ready

import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'

export const HealthReply = Type.Object({ status: Type.Literal('ok') })

const health: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    schema: { tags: ['discovery'], summary: 'Liveness check', response: { 200: HealthReply } }
  }, async () => ({ status: 'ok' as const }))
}

export default health

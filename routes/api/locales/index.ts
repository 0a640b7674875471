import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { localesSchema } from './schemas.js'

const locales: FastifyPluginAsyncTypebox = async (fastify) => {
  const { locales } = fastify.config
  fastify.get('/', { schema: localesSchema }, async () => ({ locales: [...locales], default: locales[0] ?? null }))
}

export default locales

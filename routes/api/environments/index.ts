import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { DEFAULT_ENVIRONMENT } from '../../../types/scope.js'
import { environmentsSchema } from './schemas.js'

const environments: FastifyPluginAsyncTypebox = async (fastify) => {
  const configured = fastify.config.environments
  const names = configured.length > 0 ? [...configured] : [DEFAULT_ENVIRONMENT]
  fastify.get('/', { schema: environmentsSchema }, async () => ({ environments: names, default: names[0] as string }))
}

export default environments

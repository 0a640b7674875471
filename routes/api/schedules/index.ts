import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ROLES } from '../../../lib/config.js'
import { deleteSchema, listSchema } from './schemas.js'

const scheduleRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // Contract §13: with keys on, any valid key may read; writes need ContentWrite.
  const anyKey = fastify.requireRole(...ROLES)
  const contentWrite = fastify.requirePermission('ContentWrite')

  fastify.get('/', { schema: listSchema, onRequest: anyKey }, async (request) => {
    const { status, _page: page, _per_page: perPage, _environment: environment, _locale: locale, collection, slug } = request.query
    return await fastify.schedules.list({
      status,
      page,
      perPage,
      environment: environment === undefined ? null : fastify.scopeOf({ _environment: environment }).environment,
      locale: locale === undefined ? undefined : fastify.scopeOf({ _locale: locale }).locale,
      collection,
      slug
    })
  })

  fastify.delete('/:id', { schema: deleteSchema, onRequest: contentWrite }, async (request, reply) => {
    await fastify.schedules.remove(request.params.id)
    reply.code(204)
    return null
  })
}

export default scheduleRoutes

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../../../types/errors.js'
import { DeliveriesQuery, DeliveriesReply } from './schemas.js'

const deliveries: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    preHandler: fastify.requireRole('admin'),
    schema: {
      tags: ['webhooks'],
      summary: 'Recent webhook deliveries, newest first',
      description: 'Each delivery of an event to a webhook URL, with its attempts and the last answer or error. ' +
        '`_after=<next>` gives the page after an answer (contract §10), which newer deliveries do not shift. ' +
        'Admin role when API keys are configured.',
      security: [{ bearer: [] }, { apiKey: [] }],
      querystring: DeliveriesQuery,
      response: { 200: DeliveriesReply, ...errorResponses(400, 401, 403) }
    }
  }, async (request) => {
    const { _page: page, _per_page: perPage, _after: after, status } = request.query
    return fastify.webhooks.deliveries({ page, perPage, after, status })
  })
}

export default deliveries

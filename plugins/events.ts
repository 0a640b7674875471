import fp from 'fastify-plugin'
import { EventBus } from '../lib/events.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The event bus: routes emit schema.*, content.* and asset.* events; webhooks listen. */
    events: EventBus
  }
}

export default fp(async (fastify) => {
  fastify.decorate('events', new EventBus((err, event) => {
    fastify.log.error({ err, event: event.event }, 'event listener failed')
  }))
}, { name: 'events', fastify: '5.x' })

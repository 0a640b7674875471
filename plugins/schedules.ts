// Scheduled publishing (contract §13): the schedule service the routes call, and the runner that
// carries the schedules out in the background, through the content pipeline's publish and
// unpublish (every update rule: validation, events, cache, change feed). Each process runs one
// runner, claiming as the cluster origin; the store hands each schedule to one claimant.
import fp from 'fastify-plugin'
import { Scheduler } from '../lib/editorial/scheduler.js'
import { ScheduleService } from '../lib/editorial/schedules.js'
import type { ScheduleRecord } from '../types/editorial.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Make, list and cancel scheduled actions (routes/api/schedules and .../schedule). */
    schedules: ScheduleService
    /** The background runner of due schedules: started once the server is ready, stopped on close. */
    scheduler: Scheduler
  }
}

export default fp(async (fastify) => {
  const { content, store, webhooks } = fastify

  const run = async (schedule: ScheduleRecord): Promise<void> => {
    const { scope, collection, slug } = schedule
    await (schedule.action === 'publish' ? content.publish(scope, collection, slug) : content.unpublish(scope, collection, slug))
    // As a reply does (plugins/webhooks.ts): the change's deliveries are durable before the schedule is ended.
    if (webhooks.recordingCount > 0) await webhooks.recorded()
  }

  const scheduler = new Scheduler({ store, owner: fastify.cluster.origin, run, log: fastify.log.child({ component: 'schedules' }) })
  fastify.decorate('scheduler', scheduler)
  fastify.decorate('schedules', new ScheduleService({
    store,
    checkCollection: collection => { content.model(collection) },
    added: () => { scheduler.wake() }
  }))

  // Started once every plugin is ready (the store prepared, the webhook outbox caught up).
  fastify.addHook('onReady', async () => { scheduler.start() })
  // Stopped before anything closes (preClose runs before every onClose): the action under way
  // still has the store, the cache and the webhook outbox it writes to.
  fastify.addHook('preClose', async () => { await scheduler.close() })
}, { name: 'schedules', dependencies: ['config', 'store', 'cluster', 'content', 'webhooks'], fastify: '5.x' })

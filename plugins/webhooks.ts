import path from 'node:path'
import fp from 'fastify-plugin'
import { WebhookService } from '../lib/webhooks/service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Webhook delivery (contract §6): the outbox, the background worker and the delivery history. */
    webhooks: WebhookService
  }
}

/** The outbox lives beside the content, whatever CMS_STORE says: it is infrastructure, not content. */
export const OUTBOX_FILE = 'outbox.db'

// Every event on the bus becomes one delivery per configured URL, written to the outbox inside
// the listener: routes emit before they reply, so an acknowledged change is never lost. Delivery
// itself runs in the background, after the reply, and never affects it.
export default fp(async (fastify) => {
  const { config } = fastify
  const service = new WebhookService({
    urls: config.webhooks,
    secret: config.webhookSecret,
    backoffMs: config.webhookBackoffMs,
    outboxFile: path.join(config.dataDir, OUTBOX_FILE),
    logger: fastify.log.child({ component: 'webhooks' })
  })
  fastify.decorate('webhooks', service)

  if (service.enabled) {
    const off = fastify.events.on(event => { service.record(event) })
    // Delivery starts once the app is ready; pending deliveries from a previous run resume.
    fastify.addHook('onReady', async () => { service.start() })
    fastify.addHook('onClose', async () => {
      off()
      await service.close()
    })
  }
}, { name: 'webhooks', dependencies: ['config', 'data', 'events'], fastify: '5.x' })

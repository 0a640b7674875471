import path from 'node:path'
import fp from 'fastify-plugin'
import type { Config } from '../lib/config.js'
import { WebhookService } from '../lib/webhooks/service.js'
import { DEFAULT_ENVIRONMENT, type Scope } from '../types/scope.js'

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
    // Delivery starts once the app is ready; pending deliveries from a previous run resume, and
    // changes a crash left stored but unannounced are announced first (lib/webhooks/replay.ts).
    fastify.addHook('onReady', async () => {
      await service.catchUp({ log: fastify.store.changes, scopes: servedScopes(config), entry: async (scope, collection, slug) => await fastify.store.get(scope, collection, slug) })
      service.start()
    })
    fastify.addHook('onClose', async () => {
      off()
      await service.close()
    })
  }
}, { name: 'webhooks', dependencies: ['config', 'data', 'events', 'store'], fastify: '5.x' })

/** Every (environment, locale) the settings serve. */
function servedScopes (config: Config): Scope[] {
  const environments = config.environments.length === 0 ? [DEFAULT_ENVIRONMENT] : config.environments
  const locales = config.locales.length === 0 ? [null] : config.locales
  return environments.flatMap(environment => locales.map(locale => ({ environment, locale })))
}
